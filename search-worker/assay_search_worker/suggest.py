"""Suggestions for random, sobol and tpe sweeps, from well-kept libraries.

- random: Optuna's RandomSampler.
- sobol: SciPy's scrambled Sobol sequence (what Optuna's QMCSampler draws from), point number `trial - 1`.
- tpe: Optuna's TPESampler through the ask-and-tell API, fed the finished trials.

Seeding: each trial's sampler is seeded from (seed, trial number), so the same request and the same
results give the same suggestion, and two trials never draw the same random stream.
"""

from __future__ import annotations

import hashlib
import math
from typing import Any

import optuna
from optuna.distributions import (
    BaseDistribution,
    CategoricalDistribution,
    FloatDistribution,
    IntDistribution,
)
from optuna.trial import TrialState, create_trial
from scipy.stats import qmc

optuna.logging.set_verbosity(optuna.logging.WARNING)


def trial_seed(seed: int, trial: int) -> int:
    """A 32-bit seed for one trial's sampler, mixed so that neighbouring trials are unrelated."""
    digest = hashlib.sha256(f"{seed}:{trial}".encode()).digest()
    return int.from_bytes(digest[:4], "big")


def _choice_key(value: Any) -> Any:
    # Optuna's CategoricalDistribution takes None, bool, int, float and str; anything else (a list, a
    # mapping) is chosen by its index and mapped back.
    return value if value is None or isinstance(value, (bool, int, float, str)) else None


def distribution_of(spec: dict[str, Any]) -> BaseDistribution:
    kind = spec["distribution"]
    if kind == "uniform":
        return FloatDistribution(float(spec["low"]), float(spec["high"]))
    if kind == "log_uniform":
        return FloatDistribution(float(spec["low"]), float(spec["high"]), log=True)
    if kind == "int":
        return IntDistribution(int(spec["low"]), int(spec["high"]), log=bool(spec.get("log", False)))
    if kind == "choice":
        return CategoricalDistribution(list(range(len(spec["values"]))))
    raise ValueError(f"unknown distribution {kind!r}")


def _to_internal(spec: dict[str, Any], value: Any) -> Any:
    """A suggested value as Optuna's distribution holds it (a choice by its index)."""
    if spec["distribution"] == "choice":
        values = spec["values"]
        for i, v in enumerate(values):
            if v == value:
                return i
        raise ValueError(f"{value!r} is not one of the choices")
    return value


def _to_value(spec: dict[str, Any], internal: Any) -> Any:
    if spec["distribution"] == "choice":
        return spec["values"][int(internal)]
    if spec["distribution"] == "int":
        return int(internal)
    return float(internal)


def _sobol(space: dict[str, dict[str, Any]], seed: int, trial: int) -> dict[str, Any]:
    names = sorted(space)
    engine = qmc.Sobol(d=len(names), scramble=True, seed=seed)
    if trial > 1:
        engine.fast_forward(trial - 1)
    point = engine.random(1)[0]
    params: dict[str, Any] = {}
    for name, u in zip(names, point):
        spec = space[name]
        kind = spec["distribution"]
        if kind == "uniform":
            params[name] = float(spec["low"] + u * (spec["high"] - spec["low"]))
        elif kind == "log_uniform":
            lo, hi = math.log(spec["low"]), math.log(spec["high"])
            params[name] = float(math.exp(lo + u * (hi - lo)))
        elif kind == "int":
            lo, hi = int(spec["low"]), int(spec["high"])
            if spec.get("log"):
                v = math.exp(math.log(lo - 0.5) + u * (math.log(hi + 0.5) - math.log(lo - 0.5)))
                params[name] = min(hi, max(lo, round(v)))
            else:
                params[name] = min(hi, lo + math.floor(u * (hi - lo + 1)))
        else:
            values = spec["values"]
            params[name] = values[min(len(values) - 1, math.floor(u * len(values)))]
    return params


_STATES = {
    "complete": TrialState.COMPLETE,
    "pruned": TrialState.PRUNED,
    "failed": TrialState.FAIL,
    "running": TrialState.RUNNING,
}


def _optuna(sampler: optuna.samplers.BaseSampler, request: dict[str, Any]) -> dict[str, Any]:
    space: dict[str, dict[str, Any]] = request["space"]
    distributions = {name: distribution_of(spec) for name, spec in space.items()}
    study = optuna.create_study(
        sampler=sampler,
        direction="minimize" if request["goal"] == "minimize" else "maximize",
    )
    for record in request["history"]:
        state = _STATES[record["state"]]
        params = {name: _to_internal(space[name], record["params"][name]) for name in space}
        value = record.get("value")
        if state == TrialState.COMPLETE and (value is None or not math.isfinite(value)):
            state = TrialState.FAIL  # a finished trial that never logged the objective tells TPE nothing
        intermediate = {int(step): float(v) for step, v in record.get("intermediate", [])}
        study.add_trial(
            create_trial(
                state=state,
                params={name: distributions[name].to_external_repr(v) for name, v in params.items()},
                distributions=distributions,
                value=value if state == TrialState.COMPLETE else None,
                intermediate_values=intermediate,
            )
        )
    trial = study.ask(distributions)
    return {
        name: _to_value(space[name], distributions[name].to_internal_repr(trial.params[name]))
        for name in space
    }


def suggest(request: dict[str, Any]) -> dict[str, Any]:
    """One trial's point: dotted path → value, for every key of the space."""
    strategy = request["strategy"]
    seed = trial_seed(int(request["seed"]), int(request["trial"]))
    if strategy == "sobol":
        return {"params": _sobol(request["space"], int(request["seed"]), int(request["trial"]))}
    if strategy == "random":
        return {"params": _optuna(optuna.samplers.RandomSampler(seed=seed), request)}
    if strategy == "tpe":
        return {"params": _optuna(optuna.samplers.TPESampler(seed=seed), request)}
    raise ValueError(f"unknown strategy {strategy!r}")
