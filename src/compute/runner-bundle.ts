// Where the runner's bundle is (scripts/build-runner.ts builds it) and which `assay run` entry an
// instance starts.
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';

// This file is src/compute/ in the repository and dist/src/compute/ in the built package.
const up = path.resolve(import.meta.dirname, '../..');
const root = path.basename(up) === 'dist' ? path.dirname(up) : up;

/** The repository or the installed package: what an instance's runner is read from. */
export const CODE_ROOT = root;

export const RUNNER_BUNDLE = path.join(root, 'dist', 'runner', 'assay-run.js');

/** The list of the sources a bundle was built from (paths relative to the repository), beside it. */
export const bundleInputs = (bundle: string) => path.join(path.dirname(bundle), 'inputs.json');

/**
 * The bundle's path when it exists and no source it was built from is newer: a checkout whose sources changed
 * since the last build runs them as they are now, never an old bundle of them. An input that is not there (an
 * installed package's dependencies live elsewhere) is not checked. Undefined when there is no fresh bundle.
 */
export function freshRunnerBundle(bundle: string = RUNNER_BUNDLE): string | undefined {
  try {
    const built = statSync(bundle).mtimeMs;
    const inputs = JSON.parse(readFileSync(bundleInputs(bundle), 'utf8')) as string[];
    for (const input of inputs) {
      const changed = statSync(path.join(root, input), { throwIfNoEntry: false })?.mtimeMs;
      if (changed !== undefined && changed > built) return undefined;
    }
    return bundle;
  } catch {
    return undefined;
  }
}

/** The script an instance's Node runs as `assay`: the fresh bundle, else bin/assay.js on the sources. */
export function runnerEntry(): string {
  return freshRunnerBundle() ?? path.join(root, 'bin', 'assay.js');
}
