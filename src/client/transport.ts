// The client's transport, for this repository's tools that call endpoints the client has no method for (the
// runner's key exchange, the worker's /orchestrator/* calls) or that check a key before any setting is saved.
// Outside src/client the client is imported through its top-level modules only (a lint zone says so).
export { Transport, type FetchLike, type TransportOptions } from './core/transport.ts';
export { nodeFetch } from './core/node-fetch.ts';
export { path } from './core/path.ts';
