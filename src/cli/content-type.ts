// Content types of uploaded files, by extension: they decide how a download is served and whether text
// is indexed.
import { createRequire } from 'node:module';
import path from 'node:path';

// mime-types parses mime-db's large JSON when loaded: `assay run` needs it only once an output appears.
const requireHere = createRequire(import.meta.url);
let lookup: typeof import('mime-types').lookup | undefined;

// What mime-db does not know but research outputs often are: JSON Lines metric logs.
const MISSING: Record<string, string> = { jsonl: 'application/jsonl' };

/**
 * The type for a file name; application/octet-stream when the extension says nothing (checkpoints:
 * .pt, .ckpt).
 */
export function contentTypeOf(file: string): string {
  lookup ??= (requireHere('mime-types') as typeof import('mime-types')).lookup;
  return lookup(file) || MISSING[path.extname(file).slice(1).toLowerCase()] || 'application/octet-stream';
}

/**
 * A component name the server accepts (segments of letters, digits, `._-`, not starting with a dot) for a
 * relative path; other characters become `_`. The asset's name keeps the path as it was.
 */
export function componentName(relativePath: string): string {
  return relativePath
    .split(/[\\/]+/)
    .filter((s) => s !== '')
    .map((s) => s.replace(/[^A-Za-z0-9._-]/g, '_').replace(/^[.-]/, '_'))
    .join('/');
}
