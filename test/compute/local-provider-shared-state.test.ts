// Several workers on one machine share the local provider's state directory (scale-out with `assay worker`
// processes): a provision in one process must never erase another's record, or a retried provision would
// start a second instance of the same run.
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
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

// A worker provisions keys one after another; its instances' command appends the key to a file.
const killedProvisioner = `
import { readFileSync } from 'node:fs';
import { LocalProvider } from ${JSON.stringify(path.join(repoRoot, 'src/compute/local-provider.ts'))};
const [stateDir, ranLog, count] = process.argv.slice(1);
const provider = new LocalProvider({ stateDir, runnerArgv: [], graceMs: 0, lockStaleMs: 2_000 });
// Its "run" has started once its line is in the log, as a managed run has once its runner started it.
const started = (key) => { try { return readFileSync(ranLog, 'utf8').split('\\n').includes(key); } catch { return false; } };
for (let i = 0; i < Number(count); i++) {
  await provider.provision({
    replaceEnded: !started('run-' + i),
    idempotencyKey: 'run-' + i,
    env: { SERVICE_SERVER_URL: 'http://127.0.0.1:1', SERVICE_EXCHANGE_TOKEN: 'k', SERVICE_EXPERIMENT_ID: 'e',
      SERVICE_VARIATION: '1', SERVICE_RUN: String(i) },
    launch: { command: 'echo "run-$SERVICE_RUN" >> "$RAN_LOG"', env: { RAN_LOG: ranLog } },
    tags: {},
    provisionedByAdmin: true,
    launchAuthor: { id: '00000000-0000-4000-8000-000000000001', email: null, is_admin: true },
  });
  process.stdout.write(i + '\\n');
}
`;

test('a worker killed -9 in the middle of provisioning: no instance runs without its record, each runs once', async (t) => {
  const stateDir = await mkdtemp(path.join(tmpdir(), 'assay-killed-provision-'));
  t.after(() => rm(stateDir, { recursive: true, force: true }));
  const ranLog = path.join(stateDir, 'ran.log');
  const KEYS = 40;
  const ROUNDS = 8;
  // Each worker is killed at a random moment after its first provision, until one gets through them all;
  // every retry provisions every key again, as a retried activity would.
  for (let round = 0; ; round++) {
    const last = round === ROUNDS;
    const child = spawn(
      process.execPath,
      ['--input-type=module', '-e', killedProvisioner, stateDir, ranLog, String(KEYS)],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    if (!last) child.stdout.once('data', () => setTimeout(() => child.kill('SIGKILL'), Math.random() * 30));
    const code = await exited;
    if (last) {
      assert.equal(code, 0, 'the last worker provisioned every key');
      break;
    }
  }
  // What the instances print lands a moment after their start.
  await new Promise((resolve) => setTimeout(resolve, 500));
  const ran = (await readFile(ranLog, 'utf8').catch(() => '')).trim().split('\n').filter(Boolean);
  const records = JSON.parse(await readFile(path.join(stateDir, 'local-instances.json'), 'utf8'));
  const counts = new Map<string, number>();
  for (const key of ran) counts.set(key, (counts.get(key) ?? 0) + 1);
  assert.deepEqual(
    [...counts].filter(([, n]) => n > 1),
    [],
    'no instance ran twice',
  );
  assert.deepEqual(
    ran.filter((key) => !records[key]),
    [],
    'every instance that ran has its record',
  );
  // A killed worker's held instance ended without running; the next worker started one in its place.
  const keys = Array.from({ length: KEYS }, (_, i) => `run-${i}`);
  assert.deepEqual(
    keys.filter((key) => counts.get(key) !== 1),
    [],
    'every key ran once',
  );
  assert.deepEqual(Object.keys(records).sort(), keys.sort(), 'one record per key');
  t.diagnostic(`${ROUNDS} workers killed -9 while provisioning; ${ran.length} of ${KEYS} instances ran`);
});
