// Content types of uploaded files, by extension: they decide how a download is served and whether text is indexed.
import path from 'node:path';

const TYPES: Record<string, string> = {
  '.txt': 'text/plain',
  '.log': 'text/plain',
  '.md': 'text/markdown',
  '.csv': 'text/csv',
  '.tsv': 'text/tab-separated-values',
  '.html': 'text/html',
  '.json': 'application/json',
  '.jsonl': 'application/jsonl',
  '.yaml': 'application/x-yaml',
  '.yml': 'application/x-yaml',
  '.pdf': 'application/pdf',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.svg': 'image/svg+xml',
  '.gz': 'application/gzip',
  '.zip': 'application/zip',
};

/** The type for a file name; application/octet-stream when the extension says nothing. */
export function contentTypeOf(file: string): string {
  return TYPES[path.extname(file).toLowerCase()] ?? 'application/octet-stream';
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
