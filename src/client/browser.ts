// The client's browser entry: what runs without Node (global fetch; no files, no local upload store, no
// environment). Nothing reachable from here may import node:* or undici; a test bundles it to make sure.
export { ApiClient, type ApiClientOptions } from './api-client.ts';
export { PERSONAL } from './core/organization.ts';
export { formatBytes } from './format-bytes.ts';
export { parseSweepValues } from './sweep-values.ts';
export * from './core/errors.ts';
export { Experiment } from './handles/experiment.ts';
export { Variation } from './handles/variation.ts';
export { Run, type LogMetricsOptions } from './handles/run.ts';
export type { MetricsOptions, MetricTime } from './handles/metric-buffer.ts';
export type * from './resources/experiments.ts';
export type * from './resources/variations.ts';
export type * from './resources/runs.ts';
export type * from './resources/sweeps.ts';
export type * from './resources/assets.ts';
export type * from './resources/search.ts';
export type * from './resources/api-keys.ts';
export type * from './resources/me.ts';
export type * from './resources/organizations.ts';
