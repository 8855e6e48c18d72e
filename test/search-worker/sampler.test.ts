// The search worker's Python tests (search-worker/tests: the sampler against hand-driven Optuna and SciPy),
// run in the venv scripts/setup-search-worker.sh builds. Every test defined there must have run and passed: a
// discovery that finds none, or skips some, fails here.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { test } from 'node:test';

const root = path.resolve(import.meta.dirname, '../..');
const packageDir = path.join(root, 'search-worker');
const python = process.env.ASSAY_SEARCH_PYTHON ?? path.join(root, '.venv-search/bin/python');

/** The `def test_…` methods in the Python test files: what unittest must report as run. */
function definedTests(): number {
  const dir = path.join(packageDir, 'tests');
  return readdirSync(dir)
    .filter((file) => /^test_.*\.py$/.test(file))
    .reduce(
      (n, file) =>
        n + (readFileSync(path.join(dir, file), 'utf8').match(/^\s+def test_\w+\(/gm) ?? []).length,
      0,
    );
}

test('the sampler equals Optuna and SciPy: every Python test of search-worker/tests runs and passes', async () => {
  const expected = definedTests();
  assert.ok(expected >= 15, `only ${expected} Python tests found`);
  const run = await promisify(execFile)(
    python,
    ['-m', 'unittest', 'discover', '-v', '-s', 'tests', '-t', '.'],
    {
      cwd: packageDir,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, PYTHONDONTWRITEBYTECODE: '1' },
      maxBuffer: 16 * 1024 * 1024,
    },
  ).catch((error: { stdout?: string; stderr?: string; message: string }) => {
    assert.fail(`the Python tests failed:\n${error.stderr ?? ''}${error.stdout ?? error.message}`);
  });
  const report = run.stderr;
  const ran = Number(/^Ran (\d+) tests? in /m.exec(report)?.[1]);
  assert.equal(ran, expected, `unittest ran ${ran} tests, the files define ${expected}:\n${report}`);
  assert.match(report, /^OK$/m, `not every Python test passed (skips count as failures):\n${report}`);
});
