// Several workers on one machine share the local provider's state directory (scale-out with `assay worker`
// processes): a provision in one process must never erase another's record, or a retried provision would
// start a second instance of the same run.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { test } from 'node:test';

const repoRoot = path.resolve(import.meta.dirname, '../..');
const PROCESSES = 4;
const PER_PROCESS = 15;

// Each process provisions its own keys, all at once, through the real provider.
const provisioner = `
import { LocalProvider } from ${JSON.stringify(path.join(repoRoot, 'src/compute/local-provider.ts'))};
const [stateDir, prefix, count] = process.argv.slice(1);
const provider = new LocalProvider({ stateDir, runnerArgv: ['true'], graceMs: 0 });
await Promise.all(Array.from({ length: Number(count) }, (_, i) => provider.provision({
  idempotencyKey: prefix + '-' + i,
  env: { SERVICE_SERVER_URL: 'http://127.0.0.1:1', SERVICE_EXCHANGE_TOKEN: 'k', SERVICE_EXPERIMENT_ID: 'e',
    SERVICE_VARIATION: '1', SERVICE_RUN: String(i) },
  launch: { command: 'true' },
  tags: {},
  provisionedByAdmin: true,
  launchAuthor: { id: '00000000-0000-4000-8000-000000000001', email: null, is_admin: true },
})));
`;

test('workers provisioning at once through one state directory keep every record', async (t) => {
  const stateDir = await mkdtemp(path.join(tmpdir(), 'assay-shared-state-'));
  t.after(() => rm(stateDir, { recursive: true, force: true }));
  await Promise.all(
    Array.from({ length: PROCESSES }, (_, p) =>
      promisify(execFile)(process.execPath, [
        '--input-type=module',
        '-e',
        provisioner,
        stateDir,
        `worker${p}`,
        String(PER_PROCESS),
      ]),
    ),
  );
  const records = JSON.parse(await readFile(path.join(stateDir, 'local-instances.json'), 'utf8'));
  assert.equal(Object.keys(records).length, PROCESSES * PER_PROCESS, 'one record per provisioned instance');
});
