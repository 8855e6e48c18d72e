// The local provider's sandbox on the embedded default, as `npm start` runs it (here as root, with
// scripts/setup-local-sandbox.sh's user): a researcher who is not an admin runs managed runs and sweeps, and
// their command reaches nothing of the service; without the sandbox their launches are refused at once.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { stringify } from 'yaml';
import { startAssayServer, type AssayServer } from '../support/assay-server.ts';
import { eventually } from '../support/bounded-waits.ts';

const CANARY = `canary-${process.pid}-${Date.now()}`;

type Call = (method: string, url: string, body?: unknown) => Promise<{ status: number; body: any }>;

function caller(server: AssayServer, key: string): Call {
  return async (method, url, body) => {
    const res = await fetch(`${server.url}${url}`, {
      method,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
}

async function researcher(server: AssayServer): Promise<Call> {
  const admin = caller(server, server.bootstrapKey!);
  const made = await admin('POST', '/admin/users', { email: `researcher-${Date.now()}@example.test` });
  assert.equal(made.status, 201, JSON.stringify(made.body));
  assert.equal(made.body.user.is_admin, false);
  return caller(server, made.body.api_key.key);
}

async function draftExperiment(call: Call): Promise<string> {
  const e = await call('POST', '/experiments', { name: 'sandboxed sweep', organization_id: 'personal' });
  assert.equal(e.status, 201, JSON.stringify(e.body));
  return e.body.id;
}

/** A committed experiment of the caller with one variation and a pending run of it. */
async function pendingRun(call: Call, launch: Record<string, unknown>) {
  const e = await call('POST', '/experiments', { name: 'sandboxed', organization_id: 'personal' });
  assert.equal(e.status, 201, JSON.stringify(e.body));
  const v = await call('POST', `/experiments/${e.body.id}/variations`, {
    config_yaml: stringify({ lr: 0.1, launch }),
  });
  assert.equal(v.status, 201, JSON.stringify(v.body));
  assert.equal((await call('POST', `/experiments/${e.body.id}/commit`)).status, 200);
  const run = await call('POST', `/experiments/${e.body.id}/variations/1/runs`);
  assert.equal(run.status, 201, JSON.stringify(run.body));
  return {
    experimentId: e.body.id as string,
    path: `/experiments/${e.body.id}/variations/1/runs/${run.body.r}`,
  };
}

async function provisioned(call: Call, launch: Record<string, unknown>) {
  const run = await pendingRun(call, launch);
  const res = await call('POST', `${run.path}/provision`);
  assert.equal(res.status, 202, JSON.stringify(res.body));
  let ended: any;
  await eventually(
    async () =>
      ['succeeded', 'failed', 'cancelled'].includes((ended = (await call('GET', run.path)).body).state),
    120_000,
    'the run ends',
  );
  return { ...run, ended };
}

/**
 * Looks for the service's things and prints what it reached; exits 1 when it reached any. The test runs it
 * outside the sandbox too, where it must find them: it can fail.
 */
function probe(dataDir: string, servicePid: number): string {
  return `found=""
reach() { found="$found $1"; }
[ -r "${dataDir}/storage-secret" ] && reach storage-secret
[ -e "${dataDir}/pglite" ] && reach pglite
[ -e "${dataDir}/temporal" ] && reach temporal
[ -e "${dataDir}/instances/local-instances.json" ] && reach instances-state
for d in /var/run/postgresql /run/postgresql /root /home; do ls -A "$d" >/dev/null 2>&1 && reach "$d"; done
cat /proc/${servicePid}/environ >/dev/null 2>&1 && reach service-environ
for e in /proc/[0-9]*/environ; do tr '\\0' '\\n' < "$e" 2>/dev/null | grep -q ${CANARY} && reach "$e"; done
env | grep -q ${CANARY} && reach env
env | grep -q '^DATABASE_URL=\\|^ASSAY_DATA_DIR=\\|^ASSAY_LOG_LEVEL=' && reach service-settings
mkdir -p outputs && echo "reached:$found" > outputs/reached.txt
echo "reached:$found"
[ -z "$found" ]`;
}

describe('local runs sandboxed for every researcher, on the embedded default', () => {
  let dir: string;
  let dataDir: string;
  let server: AssayServer;
  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'assay-sandbox-'));
    dataDir = path.join(dir, 'data');
    server = await startAssayServer({
      ASSAY_DATA_DIR: dataDir,
      ASSAY_LOG_LEVEL: 'warn',
      CANARY_SECRET: CANARY,
    });
  });
  after(async () => {
    await server?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  test('a command reaches nothing of the service: data dir, secret, database socket, environment, /proc, /root', async () => {
    const pid = server.process.pid!;
    // Outside the sandbox, as the service's user, the probe reaches them: it is able to fail.
    const outside = await promisify(execFile)('sh', ['-c', probe(dataDir, pid)], {
      env: { PATH: process.env.PATH, CANARY_SECRET: CANARY },
      cwd: dir,
    }).catch((error: { stdout: string }) => error);
    assert.match(outside.stdout, /storage-secret.*pglite.*service-environ/, outside.stdout);

    const call = await researcher(server);
    const { ended, experimentId } = await provisioned(call, { command: probe(dataDir, pid) });
    assert.equal(ended.state, 'succeeded', `the command reached something: ${JSON.stringify(ended)}`);
    // Its own working dir and ./outputs work, as the runner uploads them.
    const outputs = await call('GET', `/assets?experiment_id=${experimentId}&n=1&r=${ended.r}`);
    assert.ok(outputs.body.items.length > 0, JSON.stringify(outputs.body));
    assert.ok(outputs.body.items.every((a: any) => a.state === 'ready' && a.kind === 'output'));
  });

  test('a researcher who is not an admin provisions a run and a grid sweep: all succeed', async () => {
    const call = await researcher(server);
    const { ended } = await provisioned(call, {
      command: 'test "$(id -un)" = assay-run && mkdir -p outputs && echo ok > outputs/ok.txt',
    });
    assert.equal(ended.state, 'succeeded', JSON.stringify(ended));
    const experimentId = await draftExperiment(call);
    const sweep = await call('POST', `/experiments/${experimentId}/sweeps`, {
      base_yaml: stringify({ lr: 0.1, launch: { command: 'test "$(id -un)" = assay-run' } }),
      strategy: 'grid',
      grid: { lr: [0.1, 0.01] },
      concurrency: 2,
    });
    assert.equal(sweep.status, 202, JSON.stringify(sweep.body));
    let read: any;
    await eventually(
      async () =>
        (read = (await call('GET', `/experiments/${experimentId}/sweeps/${sweep.body.id}`)).body).progress
          .done,
      120_000,
      'the sweep ends',
    );
    assert.equal(read.progress.total, 2, JSON.stringify(read.progress));
    assert.equal(read.progress.succeeded, 2, JSON.stringify(read.progress));
  });

  test('launch.memory_mb: a command past it is killed and the run fails; one within it succeeds', async () => {
    const call = await researcher(server);
    const cgroups = '/sys/fs/cgroup/memory/assay';
    const before = new Set(await readdir(cgroups));
    const big = await provisioned(call, { command: 'head -c 300M /dev/zero | tail', memory_mb: 64 });
    assert.deepEqual(
      [big.ended.state, big.ended.failure_reason],
      ['failed', 'crash'],
      JSON.stringify(big.ended),
    );
    const small = await provisioned(call, { command: 'head -c 8M /dev/zero | tail | wc -c', memory_mb: 64 });
    assert.equal(small.ended.state, 'succeeded', JSON.stringify(small.ended));
    // Each run's cgroup is gone with it.
    await eventually(
      async () => (await readdir(cgroups)).every((entry) => before.has(entry)),
      30_000,
      'the cgroups are removed',
    );
  });

  test('launch.cpus: a busy loop gets about that share of one CPU (the quota is in place)', async () => {
    const call = await researcher(server);
    // Spins 2 s of wall time and compares the CPU time it got: ~0.2 s under the quota, ~2 s without.
    const spin =
      'python3 -c "import os,time; t=time.time()\nwhile time.time()-t<2: pass\nu=os.times(); share=(u.user+u.system)/2; print(share); exit(0 if share<0.5 else 1)"';
    const run = await provisioned(call, { command: spin, cpus: 0.2 });
    assert.equal(run.ended.state, 'succeeded', JSON.stringify(run.ended));
  });
});

describe('local without the sandbox (ASSAY_LOCAL_SANDBOX=off): a researcher is refused at once', () => {
  let dir: string;
  let server: AssayServer;
  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'assay-nosandbox-'));
    server = await startAssayServer({
      ASSAY_DATA_DIR: path.join(dir, 'data'),
      ASSAY_LOG_LEVEL: 'warn',
      ASSAY_LOCAL_SANDBOX: 'off',
    });
  });
  after(async () => {
    await server?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  test('provision and sweep answer 422 naming what the operator installs or sets; nothing is made', async () => {
    const call = await researcher(server);
    const run = await pendingRun(call, { command: 'true' });
    const res = await call('POST', `${run.path}/provision`);
    assert.equal(res.status, 422, JSON.stringify(res.body));
    assert.equal(res.body.error.code, 'launch_not_allowed');
    const says = [/bubblewrap/, /scripts\/setup-local-sandbox\.sh/, /ASSAY_LOCAL_COMPUTE_USERS=all/];
    for (const pattern of says) assert.match(res.body.error.message, pattern);
    const still = (await call('GET', run.path)).body;
    assert.deepEqual([still.state, still.managed], ['pending', false]);

    const experimentId = await draftExperiment(call);
    const sweep = await call('POST', `/experiments/${experimentId}/sweeps`, {
      base_yaml: stringify({ lr: 0.1, launch: { command: 'true' } }),
      strategy: 'grid',
      grid: { lr: [0.1, 0.01] },
    });
    assert.equal(sweep.status, 422, JSON.stringify(sweep.body));
    for (const pattern of says) assert.match(sweep.body.error.message, pattern);
    assert.equal((await call('GET', `/experiments/${experimentId}/sweeps`)).body.items.length, 0);
    const variations = (await call('GET', `/experiments/${experimentId}/variations`)).body.items;
    assert.equal(variations.length, 0, 'the sweep made no variation');
    assert.deepEqual(await readdir(path.join(dir, 'data', 'instances')).catch(() => []), []);
  });
});
