// The workflow bundle's entry point: every workflow type the worker registers, by its exported name.
export { managedRun, runChangedSignal } from './managed-run.ts';
export { progressQuery, variationSweep } from './variation-sweep.ts';
