"""Assay's search worker: the sampler of searching sweeps, a Temporal activity worker.

The sweep workflow asks it for one trial's point at a time and sends every earlier trial with the request,
so the worker keeps no state: a suggestion depends only on its input, which Temporal records in the
workflow's history.
"""
