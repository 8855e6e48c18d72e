// Builds the web UI into dist/web when it is missing or older than its sources, so `npm start` and `npm test`
// serve a current UI with no extra command; an unchanged tree costs one walk over the sources.
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { build } from 'vite';

const root = path.resolve(import.meta.dirname, '..');
const config = path.join(root, 'src/web/vite.config.ts');
const sources = ['src/web', 'src/client', 'src/contract', 'package-lock.json'].map((p) => path.join(root, p));
const builtIndex = path.join(root, 'dist/web/index.html');

async function newestMtime(entry: string): Promise<number> {
  const info = await stat(entry).catch(() => undefined);
  if (!info) return 0;
  if (!info.isDirectory()) return info.mtimeMs;
  const children = await readdir(entry);
  const times = await Promise.all(
    children.filter((name) => name !== 'node_modules').map((name) => newestMtime(path.join(entry, name))),
  );
  return Math.max(info.mtimeMs, ...times);
}

const force = process.argv.includes('--force');
const built = (await stat(builtIndex).catch(() => undefined))?.mtimeMs ?? 0;
const newest = Math.max(...(await Promise.all(sources.map(newestMtime))));
if (force || built < newest) {
  const started = performance.now();
  await build({ configFile: config });
  process.stdout.write(`web UI built into dist/web in ${Math.round(performance.now() - started)} ms\n`);
}
