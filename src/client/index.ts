// The public surface of the Assay client library.
export { Client, type ClientOptions } from './client.ts';
export { PERSONAL, maskKey, resolveSettings, type Settings } from './config.ts';
export * from './core/errors.ts';
export { Experiment } from './handles/experiment.ts';
export { Variation } from './handles/variation.ts';
export { Run } from './handles/run.ts';
export type * from './resources/experiments.ts';
export type * from './resources/variations.ts';
export type * from './resources/runs.ts';
export type * from './resources/sweeps.ts';
export type * from './resources/assets.ts';
export type * from './resources/search.ts';
export type * from './resources/api-keys.ts';
export type * from './resources/me.ts';
export type * from './resources/orchestrator.ts';
export type { UploadFile, UploadHandle, UploadParams, UploadProgress } from './uploads/uploader.ts';
export { environmentSnapshot } from './environment.ts';
