// Bundles `assay run` (src/cli/runner-main.ts and everything it loads, npm packages included) into one file,
// dist/runner/assay-run.js, which the local compute provider spawns for each managed run when it is up to
// date (src/compute/runner-bundle.ts). Node then reads and compiles one file instead of resolving, reading
// and type-stripping each module. Beside it, inputs.json lists the sources it was built from, so a bundle
// older than any of them is not used. `npm run build` and scripts/test.sh run this; it takes well under
// a second.
//   node scripts/build-runner.ts
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';
import { RUNNER_BUNDLE, bundleInputs } from '../src/compute/runner-bundle.ts';

const root = path.resolve(import.meta.dirname, '..');

/** Builds into the directory of `bundle` (emptied first: chunks are named by a hash of their contents). */
export async function buildRunner(bundle: string = RUNNER_BUNDLE): Promise<void> {
  rmSync(path.dirname(bundle), { recursive: true, force: true });
  mkdirSync(path.dirname(bundle), { recursive: true });
  const result = await build({
    entryPoints: [path.join(root, 'src/cli/runner-main.ts')],
    outdir: path.dirname(bundle),
    entryNames: path.basename(bundle, '.js'),
    // What is loaded later (the uploader, with undici: only a run with outputs needs it) is a chunk of
    // its own.
    splitting: true,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node22',
    metafile: true,
    logLevel: 'warning',
    // CommonJS dependencies (undici) require Node's built-in modules: an ES module has no `require` of its
    // own, so every file gets one. Modules that the sources require by a computed name stay outside the
    // bundle, and Node resolves them from its place in the repository or the installed package, as from
    // the sources.
    banner: {
      js: "import { createRequire as __bundleRequire } from 'node:module'; const require = __bundleRequire(import.meta.url);",
    },
  });
  const inputs = Object.keys(result.metafile.inputs).map((input) => path.relative(root, path.resolve(input)));
  writeFileSync(bundleInputs(bundle), JSON.stringify(inputs, null, 2) + '\n');
}

if (import.meta.main) await buildRunner();
