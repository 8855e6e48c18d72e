import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from '../../src/client/index.ts';
import { spawnCli, runCli, tempHome, waitFor, repoRoot, type CliResult } from '../support/cli.ts';
import { mintEmbeddedOrchestratorKey } from '../../src/server/orchestration/orchestrator-keys.ts';
import { FakeOrchestrator } from '../support/fake-orchestrator.ts';
import { committedExperiment, createRun } from '../support/fixtures.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { downloadedDigests, sha256 } from '../support/upload-files.ts';
import { freePort } from '../support/free-port.ts';
import { mintExchangeToken } from '../support/worker-key-exchange.ts';

const CHILD = path.join(repoRoot, 'test/cli/fixtures/child.sh');
const OUTPUTS = ['checkpoints/weights.bin', 'config-seen.json', 'result.txt'];

describe('assay run: a bash script as the command, against the real service', () => {
  let t: TestService;
  let key: string;
  let home: string;
  let experimentId: string;
  let client: Client;
  const env = () => ({ SERVICE_SERVER_URL: t.url, SERVICE_API_KEY: key });

  before(async () => {
    t = await startTestService({ listen: true });
    key = (await t.createUser()).key;
    home = await tempHome();
    experimentId = (await committedExperiment(t, key)).id;
    client = new Client({
      serverUrl: t.url,
      apiKey: key,
      uploadStorePath: path.join(home, 'test-uploads.db'),
    });
  });
  after(async () => {
    client.close();
    await t.close();
    await rm(home, { recursive: true, force: true });
  });

  /** `assay run` in a work directory of its own; answers the directory, the process and its result. */
  function assayRun(name: string, flags: string[], command: string[], extraEnv: Record<string, string> = {}) {
    const cwd = path.join(home, name);
    const outputs = path.join(cwd, 'outputs');
    mkdirSync(cwd, { recursive: true });
    const run = spawnCli(
      ['run', '--heartbeat-interval', '1', '--outputs', outputs, ...flags, '--', 'bash', CHILD, ...command],
      { home, cwd, env: { ...env(), ...extraEnv } },
    );
    return { cwd, outputs, ...run };
  }

  async function runOf(r: number) {
    return client.runs.get(experimentId, 1, r);
  }

  /** The run's assets are exactly the files of the outputs directory, ready, byte for byte. */
  async function assertOutputsUploaded(r: number, outputs: string) {
    const assets = (await client.assets.list({ run: { experimentId, n: 1, r } })).items;
    assert.deepEqual(assets.map((a) => a.name).sort(), OUTPUTS);
    for (const asset of assets) {
      assert.equal(asset.state, 'ready');
      // Files under checkpoints/ are checkpoints, so a later run of the variation can resume from them.
      assert.equal(asset.kind, asset.name.startsWith('checkpoints/') ? 'checkpoint' : 'output', asset.name);
      const bytes = await readFile(path.join(outputs, asset.name));
      assert.deepEqual(Object.values(await downloadedDigests(client, asset.id)), [sha256(bytes)], asset.name);
    }
  }

  async function runNumberFrom(result: CliResult | { stderr: string }): Promise<number> {
    return Number(/as run (\d+) of variation/.exec(result.stderr)?.[1]);
  }

  it('exit 0 with the ids of a managed worker (SERVICE_*): succeeded, the config reached the command, outputs are assets', async () => {
    const { r } = await createRun(t, key, experimentId);
    const { outputs, result } = assayRun('succeed', [], ['succeed'], {
      SERVICE_EXPERIMENT_ID: experimentId,
      SERVICE_VARIATION: '1',
      SERVICE_RUN: String(r),
    });
    const done = await result;
    assert.equal(done.code, 0, done.stderr);
    const run = await runOf(r);
    assert.equal(run.state, 'succeeded');
    assert.equal(run.failure_reason, null);
    const seen = JSON.parse(await readFile(path.join(outputs, 'config-seen.json'), 'utf8'));
    assert.deepEqual(seen.config_json, { lr: 0.1 });
    assert.equal(seen.r, r);
    assert.match(
      await readFile(path.join(outputs, 'result.txt'), 'utf8'),
      new RegExp(`^run ${r} of variation 1 of ${experimentId}`),
    );
    assert.equal(run.environment?.os, process.platform);
    assert.equal(run.environment?.node, process.versions.node);
    assert.deepEqual(run.environment?.command, ['bash', CHILD, 'succeed']);
    await assertOutputsUploaded(r, outputs);
  });

  it('exit 3, given --experiment and --variation only: a new run, failed crash "exit code 3", exit code 3, outputs still uploaded', async () => {
    // A file already in the outputs directory is an earlier run's: not uploaded as this one's.
    mkdirSync(path.join(home, 'fail', 'outputs'), { recursive: true });
    writeFileSync(path.join(home, 'fail', 'outputs', 'stale.log'), 'from an earlier run\n');
    const { outputs, result } = assayRun(
      'fail',
      ['--experiment', experimentId, '--variation', '1'],
      ['fail'],
    );
    const done = await result;
    assert.equal(done.code, 3, done.stderr);
    assert.match(done.stderr, /loss diverged/);
    const run = await runOf(await runNumberFrom(done));
    assert.equal(run.state, 'failed');
    assert.equal(run.failure_reason, 'crash');
    assert.equal(run.failure_message, 'exit code 3');
    await assertOutputsUploaded(run.r, outputs);
  });

  it('cancelled through the API: the control long-poll stops the command (SIGTERM), the run fails abandoned', async () => {
    const pidFile = path.join(home, 'cancel.pid');
    const { outputs, result } = assayRun(
      'cancel',
      ['--experiment', experimentId, '--variation', '1', '--grace', '5'],
      ['wait', pidFile],
    );
    await waitFor('the command to run', () => readFile(pidFile, 'utf8').catch(() => undefined));
    const runs = await client.runs.list(experimentId, 1);
    const r = runs.find((x) => x.state === 'running')!.r;
    await client.runs.cancel(experimentId, 1, r);
    const done = await result;
    assert.equal(done.code, 143, done.stderr); // the script died of the forwarded SIGTERM
    const run = await runOf(r);
    assert.equal(run.state, 'failed');
    assert.equal(run.failure_reason, 'abandoned');
    assert.equal(run.failure_message, 'cancelled; command: killed by SIGTERM');
    await assertOutputsUploaded(r, outputs);
  });

  it('outputs upload while the command runs; the command killed with SIGKILL from outside: failed crash "killed by SIGKILL", exit code 137', async () => {
    const pidFile = path.join(home, 'kill.pid');
    const { outputs, result } = assayRun(
      'kill',
      ['--experiment', experimentId, '--variation', '1'],
      ['wait', pidFile],
    );
    const pid = Number(
      await waitFor('the command to run', () => readFile(pidFile, 'utf8').catch(() => undefined)),
    );
    // Outputs go up while the command still runs, once each file has kept its size for a moment.
    const r = (await client.runs.list(experimentId, 1)).find((x) => x.state === 'running')!.r;
    await waitFor('the outputs to be uploaded during the run', async () => {
      const { items } = await client.assets.list({ run: { experimentId, n: 1, r }, state: 'ready' });
      return items.length === OUTPUTS.length ? true : undefined;
    });
    process.kill(pid, 'SIGKILL');
    const done = await result;
    assert.equal(done.code, 137, done.stderr);
    const run = await runOf(r);
    assert.equal(run.state, 'failed');
    assert.equal(run.failure_reason, 'crash');
    assert.equal(run.failure_message, 'killed by SIGKILL');
    await assertOutputsUploaded(run.r, outputs);
  });

  it('assay run itself gets SIGTERM: forwarded, and the run fails abandoned before it exits', async () => {
    const pidFile = path.join(home, 'term.pid');
    const { outputs, child, result } = assayRun(
      'term',
      ['--experiment', experimentId, '--variation', '1'],
      ['wait', pidFile],
    );
    await waitFor('the command to run', () => readFile(pidFile, 'utf8').catch(() => undefined));
    child.kill('SIGTERM');
    const done = await result;
    assert.equal(done.code, 143, done.stderr);
    const run = await runOf(await runNumberFrom(done));
    assert.equal(run.failure_reason, 'abandoned');
    assert.equal(run.failure_message, 'interrupted by SIGTERM; command: killed by SIGTERM');
    await assertOutputsUploaded(run.r, outputs);
  });

  it('ASSAY_RUN_ON_SIGNAL=leave: a SIGTERM to assay run stops the command, uploads its outputs, and leaves the run running for its orchestrator', async () => {
    const pidFile = path.join(home, 'leave.pid');
    const { outputs, child, result } = assayRun(
      'leave',
      ['--experiment', experimentId, '--variation', '1'],
      ['wait', pidFile],
      { ASSAY_RUN_ON_SIGNAL: 'leave' },
    );
    await waitFor('the command to run', () => readFile(pidFile, 'utf8').catch(() => undefined));
    child.kill('SIGTERM');
    const done = await result;
    assert.equal(done.code, 143, done.stderr);
    assert.match(done.stderr, /the run is left to its orchestrator \(ASSAY_RUN_ON_SIGNAL=leave\)/);
    const run = await runOf(await runNumberFrom(done));
    assert.equal(run.state, 'running', 'the run was ended by the runner');
    await assertOutputsUploaded(run.r, outputs);
  });

  it('--on-signal leave: a command killed by SIGKILL from outside (a scheduler ending the job) leaves the run too; a crash of its own still fails it', async () => {
    const pidFile = path.join(home, 'leave-kill.pid');
    const { result } = assayRun(
      'leave-kill',
      ['--experiment', experimentId, '--variation', '1', '--on-signal', 'leave'],
      ['wait', pidFile],
    );
    const pid = Number(
      await waitFor('the command to run', () => readFile(pidFile, 'utf8').catch(() => undefined)),
    );
    process.kill(pid, 'SIGKILL');
    const done = await result;
    assert.equal(done.code, 137, done.stderr);
    assert.equal((await runOf(await runNumberFrom(done))).state, 'running');
    const failing = await assayRun(
      'leave-fail',
      ['--experiment', experimentId, '--variation', '1', '--on-signal', 'leave'],
      ['fail'],
    ).result;
    const failed = await runOf(await runNumberFrom(failing));
    assert.equal(failed.state, 'failed');
    assert.equal(failed.failure_reason, 'crash');
  });

  it('--on-signal leave: a shell that exits 143 because a scheduler’s SIGTERM killed its program leaves the run, even when the signal reaches assay run after the command ended', async () => {
    const pidFile = path.join(home, 'leave-shell.pid');
    const { child, result } = assayRun(
      'leave-shell',
      ['--experiment', experimentId, '--variation', '1', '--on-signal', 'leave'],
      ['child', pidFile],
    );
    const pid = Number(
      await waitFor('the program to run', () => readFile(pidFile, 'utf8').catch(() => undefined)),
    );
    // As Slurm signals a job: the program first (its shell exits 143), then assay run itself.
    process.kill(pid, 'SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 50));
    child.kill('SIGTERM');
    const done = await result;
    assert.equal(done.code, 143, done.stderr);
    assert.match(done.stderr, /the run is left to its orchestrator \(ASSAY_RUN_ON_SIGNAL=leave\)/);
    assert.equal((await runOf(await runNumberFrom(done))).state, 'running', done.stderr);
  });

  it('a command that ignores SIGTERM is killed after --grace', async () => {
    const pidFile = path.join(home, 'stubborn.pid');
    const { child, result } = assayRun(
      'stubborn',
      ['--experiment', experimentId, '--variation', '1', '--grace', '1'],
      ['stubborn', pidFile],
    );
    await waitFor('the command to run', () => readFile(pidFile, 'utf8').catch(() => undefined));
    const sent = Date.now();
    child.kill('SIGTERM');
    const done = await result;
    assert.ok(Date.now() - sent >= 1000, 'not before the grace period');
    assert.equal(done.code, 137, done.stderr);
    const run = await runOf(await runNumberFrom(done));
    assert.equal(run.failure_reason, 'abandoned');
    assert.equal(run.failure_message, 'interrupted by SIGTERM; command: killed by SIGKILL');
  });

  it('waits for a service that does not answer yet when it starts (a replica restarting), then runs', async () => {
    const { r } = await createRun(t, key, experimentId);
    const port = await freePort();
    const { result } = assayRun('late-service', [], ['succeed'], {
      SERVICE_SERVER_URL: `http://127.0.0.1:${port}`,
      SERVICE_EXPERIMENT_ID: experimentId,
      SERVICE_VARIATION: '1',
      SERVICE_RUN: String(r),
    });
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    // The service comes up on the runner's address: a forwarder to the test service.
    const target = new URL(t.url!);
    const forwarder = net.createServer((socket) => {
      const upstream = net.connect(Number(target.port), target.hostname);
      socket.pipe(upstream).pipe(socket);
      socket.on('error', () => upstream.destroy());
      upstream.on('error', () => socket.destroy());
    });
    await new Promise<void>((resolve) => forwarder.listen(port, '127.0.0.1', resolve));
    try {
      const done = await result;
      assert.equal(done.code, 0, done.stderr);
      assert.match(done.stderr, /could not read the run’s config yet/);
      assert.equal((await runOf(r)).state, 'succeeded');
    } finally {
      forwarder.close();
    }
  });

  it('exit codes of its own: 2 without a run to act as, 1 with an error line when the service refuses', async () => {
    const none = await runCli(['run', '--', 'true'], { home, env: env() });
    assert.equal(none.code, 2);
    assert.match(none.stderr, /which run\?/);
    const missing = await runCli(
      ['run', '--experiment', experimentId, '--variation', '1', '--run', '999', '--', 'true'],
      { home, env: env() },
    );
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /^error: .+ \(not_found, request [0-9a-f-]+\)$/m);
    const noKey = await runCli(['run', '--experiment', experimentId, '--variation', '1', '--', 'true'], {
      home,
      env: { SERVICE_SERVER_URL: t.url },
    });
    assert.equal(noKey.code, 2);
    assert.match(noKey.stderr, /no API key/);
  });
});

describe('assay run on a managed instance: the exchange token bought its worker key', () => {
  let t: TestService;
  let home: string;
  let orchestratorKey: string;

  before(async () => {
    t = await startTestService({ listen: true, orchestrator: new FakeOrchestrator() });
    home = await tempHome();
    orchestratorKey = (await mintEmbeddedOrchestratorKey(t.service.db)).token;
  });
  after(async () => {
    await t.close();
    await rm(home, { recursive: true, force: true });
  });

  it('trades SERVICE_EXCHANGE_TOKEN once: the run succeeds on the worker key, which COMMAND gets; the token again exits 1', async () => {
    const owner = (await t.createUser()).key;
    const experimentId = (await committedExperiment(t, owner)).id;
    const run = await createRun(t, owner, experimentId);
    assert.equal((await t.as(owner).post(`${run.path}/provision`)).status, 202);
    const token = await mintExchangeToken(t, orchestratorKey, run.id);
    const cwd = path.join(home, 'managed');
    mkdirSync(cwd, { recursive: true });
    // What the command sees: a worker key in SERVICE_API_KEY, and no exchange token any more.
    const probe =
      'case "$SERVICE_API_KEY" in sk_worker_*) k=worker;; *) k=other;; esac; echo "$k ${SERVICE_EXCHANGE_TOKEN:-gone}" > seen.txt';
    const env = {
      SERVICE_SERVER_URL: t.url,
      SERVICE_EXCHANGE_TOKEN: token,
      SERVICE_EXPERIMENT_ID: experimentId,
      SERVICE_VARIATION: '1',
      SERVICE_RUN: String(run.r),
    };
    const done = await runCli(['run', '--outputs', path.join(cwd, 'outputs'), '--', 'sh', '-c', probe], {
      home,
      cwd,
      env,
    });
    assert.equal(done.code, 0, done.stderr);
    assert.equal((await t.as(owner).get(run.path)).body.state, 'succeeded');
    assert.equal(await readFile(path.join(cwd, 'seen.txt'), 'utf8'), 'worker gone\n');
    const keys = (await t.as(owner).get('/api-keys')).body.items.filter(
      (k: { run_id: string | null }) => k.run_id === run.id,
    );
    assert.equal(keys.length, 1, 'the run’s one worker key');

    const again = await runCli(['run', '--', 'true'], { home, cwd, env });
    assert.equal(again.code, 1);
    assert.match(again.stderr, /exchange token already used/);
  });
});
