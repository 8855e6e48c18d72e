// The JavaScript a first look loads before the page first renders, from the build's own chunk graph
// (dist/web/.vite/manifest.json): the entry index.html loads and its static imports, then the opened page's
// chunk and its imports (src/web/ui/main.tsx loads that before rendering), each file once, gzipped as a
// server or CDN that compresses would send it.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { gzipSync } from 'node:zlib';

const webDir = path.resolve(import.meta.dirname, '../../dist/web');

interface ManifestChunk {
  file: string;
  imports?: string[];
}

export interface InitialJs {
  files: string[];
  bytes: number;
  gzipBytes: number;
}

/** The entry's JavaScript, and with `page` (a module under src/web, e.g. `ui/pages/compare-page.tsx`) that page's. */
export async function initialJs(page?: string): Promise<InitialJs> {
  const manifest = JSON.parse(await readFile(path.join(webDir, '.vite/manifest.json'), 'utf8')) as Record<
    string,
    ManifestChunk
  >;
  const files = new Set<string>();
  const visit = (key: string) => {
    const chunk = manifest[key];
    if (!chunk) throw new Error(`no chunk ${key} in dist/web/.vite/manifest.json: build the UI first`);
    if (!chunk.file.endsWith('.js') || files.has(chunk.file)) return;
    files.add(chunk.file);
    for (const imported of chunk.imports ?? []) visit(imported);
  };
  visit('index.html');
  if (page) visit(page);
  let bytes = 0;
  let gzipBytes = 0;
  for (const file of files) {
    const content = await readFile(path.join(webDir, file));
    bytes += content.length;
    gzipBytes += gzipSync(content, { level: 9 }).length;
  }
  return { files: [...files], bytes, gzipBytes };
}

export const kb = (bytes: number) => (bytes / 1024).toFixed(1);
