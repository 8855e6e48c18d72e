// The runner's bundle (scripts/build-runner.ts): it runs `assay run`, and a bundle older than a source it was
// built from is not used (src/compute/runner-bundle.ts). Built into a directory of its own: the repository's
// bundle may be in use by other test files meanwhile.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, test } from 'node:test';
import { buildRunner } from '../../scripts/build-runner.ts';
import { bundleInputs, freshRunnerBundle } from '../../src/compute/runner-bundle.ts';

const root = path.resolve(import.meta.dirname, '../..');
const dir = mkdtempSync(path.join(tmpdir(), 'assay-runner-bundle-'));
const bundle = path.join(dir, 'out', 'assay-run.js');
after(() => rmSync(dir, { recursive: true, force: true }));

test('the bundle runs `assay run` and keeps the uploader (undici) out of what every run loads', async () => {
  await buildRunner(bundle);
  assert.equal(freshRunnerBundle(bundle), bundle);
  const inputs = JSON.parse(readFileSync(bundleInputs(bundle), 'utf8')) as string[];
  assert.ok(inputs.includes('src/cli/run-command.ts'), 'built from the sources of `assay run`');

  const help = await promisify(execFile)(process.execPath, [bundle, 'run', '--help']);
  assert.match(help.stdout, /--heartbeat-interval <seconds>/);
  // No run to report to: a usage error, exit code 2, as bin/assay.js gives it.
  const noRun = await promisify(execFile)(process.execPath, [bundle, 'run', '--', 'true'], {
    env: { PATH: process.env.PATH, HOME: dir },
  }).catch((error: { code: number; stderr: string }) => error);
  assert.equal((noRun as { code: number }).code, 2);
  assert.match((noRun as { stderr: string }).stderr, /which run\?/);

  const entry = readFileSync(bundle, 'utf8');
  assert.doesNotMatch(entry, /undici/, 'the entry chunk does not hold the uploader');
  const uploader = readdirSync(path.dirname(bundle)).find((f) => f.startsWith('uploader-'));
  assert.ok(uploader, 'the uploader is a chunk of its own');
  // Loaded as the runner loads it (from an ES module, where undici's requires of built-ins need the banner's
  // `require`); the uploads themselves go through it in test/orchestration.
  const loaded = await promisify(execFile)(process.execPath, [
    '--input-type=module',
    '-e',
    `const m = await import(${JSON.stringify(path.join(path.dirname(bundle), uploader))}); console.log(typeof m.createUploader);`,
  ]);
  assert.equal(loaded.stdout.trim(), 'function');
});

test('a bundle older than one of its sources is not used', () => {
  const newer = path.join(dir, 'newer-source.ts');
  writeFileSync(newer, '');
  const inputs = JSON.parse(readFileSync(bundleInputs(bundle), 'utf8')) as string[];
  writeFileSync(bundleInputs(bundle), JSON.stringify([...inputs, path.relative(root, newer)]));
  const future = new Date(Date.now() + 60_000);
  utimesSync(newer, future, future);
  assert.equal(freshRunnerBundle(bundle), undefined);
  // An input that is not there (an installed package's dependencies) is not held against it.
  writeFileSync(bundleInputs(bundle), JSON.stringify([...inputs, 'no/such/source.ts']));
  assert.equal(freshRunnerBundle(bundle), bundle);
  assert.equal(freshRunnerBundle(path.join(dir, 'missing', 'assay-run.js')), undefined);
});
