// Builds the published packages: @assay/contract and @assay/client compiled to dist/packages/<name>/, each
// with a package.json whose exports name the emitted .js and .d.ts (Node strips no types under node_modules,
// so the repository's .ts exports cannot be published as they are). With --pack, also `npm pack`s each
// into dist/packages/.
//   node scripts/build-packages.ts [--pack]
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const outDir = path.join(root, 'dist', 'packages');
/** Source folder under src/ → the folder under dist/packages/ (the same name). */
export const PACKAGES = ['contract', 'client'] as const;

type Exports = string | { [condition: string]: Exports };

/** `./x.ts` → `{ types: './x.d.ts', default: './x.js' }`, through any nesting of conditions and subpaths. */
function builtExports(exports: Exports): Exports {
  if (typeof exports === 'string') {
    if (!exports.endsWith('.ts')) return exports;
    const stem = exports.slice(0, -'.ts'.length);
    return { types: `${stem}.d.ts`, default: `${stem}.js` };
  }
  return Object.fromEntries(Object.entries(exports).map(([key, value]) => [key, builtExports(value)]));
}

/** Compiles both packages and writes their package.json; answers the tarballs when `pack` is set. */
export function buildPackages({ pack = false } = {}): string[] {
  rmSync(outDir, { recursive: true, force: true });
  execFileSync(path.join(root, 'node_modules', '.bin', 'tsc'), ['-p', 'tsconfig.packages.json'], {
    cwd: root,
    stdio: 'inherit',
  });
  const tarballs: string[] = [];
  for (const name of PACKAGES) {
    const source = JSON.parse(readFileSync(path.join(root, 'src', name, 'package.json'), 'utf8'));
    const dir = path.join(outDir, name);
    const manifest = { ...source, exports: builtExports(source.exports) };
    writeFileSync(path.join(dir, 'package.json'), JSON.stringify(manifest, null, 2) + '\n');
    if (!pack) continue;
    const packed = execFileSync('npm', ['pack', '--json', '--pack-destination', outDir], { cwd: dir });
    const [{ filename }] = JSON.parse(packed.toString()) as [{ filename: string }];
    tarballs.push(path.join(outDir, filename));
  }
  return tarballs;
}

if (import.meta.main) {
  for (const tarball of buildPackages({ pack: process.argv.includes('--pack') })) console.log(tarball);
}
