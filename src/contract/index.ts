// The wire contract shared by the service, the client, the CLI, the workflows and the web UI: every request
// and response schema (TypeBox, so the service validates with it and /openapi.json is generated from it), the
// enums and the state-move tables. It imports nothing but typebox, so it runs in a browser and in a workflow.
export * from './common.ts';
export * from './enums.ts';
export * from './errors.ts';
export * from './launch.ts';
export * from './experiments.ts';
export * from './variations.ts';
export * from './tags.ts';
export * from './runs.ts';
export * from './logs.ts';
export * from './sweeps.ts';
export * from './assets.ts';
export * from './search.ts';
export * from './api-keys.ts';
export * from './organizations.ts';
export * from './orchestrator.ts';
export * from './metrics.ts';
