// The public surface of the Assay client library under Node: the browser entry plus settings from the
// environment and ~/.assay, crash-safe file uploads and the runner's environment snapshot.
export * from './browser.ts';
export { Client, type ClientOptions } from './client.ts';
export { maskKey, resolveSettings, type Settings } from './config.ts';
export type { UploadFile, UploadHandle, UploadParams, UploadProgress } from './uploads/uploader.ts';
export { environmentSnapshot } from './environment.ts';
