// The workflow bundle's entry point: every workflow type the worker registers, by its exported name.
export { progressQuery, runChangedSignal } from './definitions.ts';
export { managedRun } from './managed-run.ts';
export { variationSweep } from './variation-sweep.ts';
export { trialSweep } from './trial-sweep.ts';
