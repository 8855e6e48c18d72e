// The `local` compute queue on a real Temporal dev server, the real service and real runner processes: GPU
// slots from a fake slot list (ASSAY_LOCAL_GPUS=0,1,2; no GPU here), run slots (ASSAY_LOCAL_MAX_RUNS=1), the
// fair order between two users, priority, a cancel while waiting, and a service restart under a waiting run.
import assert from 'node:assert/strict';
import { readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, afterEach, before, describe, test } from 'node:test';
import { stringify } from 'yaml';
import { runCli, tempHome } from '../support/cli.ts';
import { recordHistory, startOrchestration, type Orchestration } from '../support/orchestration.ts';
import { startTestService, type TestService } from '../support/service.ts';

interface QueuedRun {
  id: string;
  experimentId: string;
  n: number;
  r: number;
  key: string;
  workflowId: string;
}

/**
 * Each command writes what it saw into its outputs (in its instance's working dir): the GPUs it was given
 * (`unset` when the variable is absent) and when it started and ended, in ms. `hold` is how long it runs:
 * seconds, or `gate` to run until the test opens it (q.open: a file in its working dir), so that what the
 * test looks at while it runs does not depend on how loaded the machine is.
 */
const recording = (hold: number | 'gate', dir = 'outputs') =>
  `mkdir -p ${dir} && echo "\${CUDA_VISIBLE_DEVICES-unset}" > ${dir}/gpus && date +%s%3N > ${dir}/start && ` +
  (hold === 'gate' ? 'until [ -f gate ]; do sleep 0.05; done' : `sleep ${hold}`) +
  ` && date +%s%3N > ${dir}/end`;

function queueWorld(world: () => Orchestration) {
  const svc = () => world().svc;
  const runPath = (run: QueuedRun) => `/experiments/${run.experimentId}/variations/${run.n}/runs/${run.r}`;

  /** A committed experiment of `key`'s user with one variation launching `command`, and a pending run. */
  async function pendingRun(
    key: string,
    launch: Record<string, unknown>,
  ): Promise<Omit<QueuedRun, 'workflowId'>> {
    const api = svc().as(key);
    const experiment = await api.post('/experiments', { name: 'queued', organization_id: 'personal' });
    assert.equal(experiment.status, 201, JSON.stringify(experiment.body));
    const variation = await api.post(`/experiments/${experiment.body.id}/variations`, {
      config_yaml: stringify({ lr: 0.1, launch }),
    });
    assert.equal(variation.status, 201, JSON.stringify(variation.body));
    assert.equal((await api.post(`/experiments/${experiment.body.id}/commit`)).status, 200);
    const run = await api.post(`/experiments/${experiment.body.id}/variations/${variation.body.n}/runs`);
    assert.equal(run.status, 201, JSON.stringify(run.body));
    return { id: run.body.id, experimentId: experiment.body.id, n: variation.body.n, r: run.body.r, key };
  }

  const gated: QueuedRun[] = [];

  return {
    runPath,
    pendingRun,

    /** Opens every gate, so that a test that failed half-way leaves no command waiting for ever. */
    async openAll() {
      for (const run of gated)
        await writeFile(path.join(world().instanceDir(run.workflowId), 'gate'), '').catch(() => undefined);
    },

    async provisioned(key: string, launch: Record<string, unknown>, priority?: number): Promise<QueuedRun> {
      const run = await pendingRun(key, launch);
      const res = await svc()
        .as(key)
        .post(
          `${runPath({ ...run, workflowId: '' })}/provision`,
          priority === undefined ? undefined : { priority },
        );
      assert.equal(res.status, 202, JSON.stringify(res.body));
      const queued = { ...run, workflowId: res.body.workflow_id as string };
      if (String(launch.command).includes('gate')) gated.push(queued);
      return queued;
    },

    /**
     * provisioned, then waits for the run's place: its saga enqueues it in its own time, and under load the
     * sagas of runs provisioned one after the other may ask in another order.
     */
    async queued(key: string, launch: Record<string, unknown>, priority?: number): Promise<QueuedRun> {
      const run = await this.provisioned(key, launch, priority);
      await this.waitFor(run, (r) => r.queue !== null, 'a queue place');
      return run;
    },

    /** Waits until a command started with recording() has begun (its start written), not just its run. */
    async begun(run: QueuedRun, name = 'outputs') {
      // Looked up on each try: a run's directory is in its slot's only once the slot has it.
      const file = () => path.join(world().instanceDir(run.workflowId), name, 'start');
      const deadline = Date.now() + 30_000;
      while (!(await readFile(file(), 'utf8').catch(() => '')).trim()) {
        assert.ok(Date.now() < deadline, `run ${run.r}: its command did not begin`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },

    async get(run: QueuedRun) {
      const res = await svc().as(run.key).get(runPath(run));
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return res.body;
    },

    async waitFor(run: QueuedRun, done: (body: any) => boolean, what: string, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const body = (await svc().as(run.key).get(runPath(run))).body;
        if (done(body)) return body;
        assert.ok(Date.now() < deadline, `run ${run.r}: still ${JSON.stringify(body)} waiting for ${what}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },

    result(run: QueuedRun) {
      return world().env.client.workflow.getHandle(run.workflowId).result();
    },

    /** Lets a command started with recording('gate') finish. */
    async open(run: QueuedRun) {
      await writeFile(path.join(world().instanceDir(run.workflowId), 'gate'), '');
    },

    /** What the run's command wrote into its outputs. */
    async outputs(run: QueuedRun, name = 'outputs') {
      const dir = path.join(world().instanceDir(run.workflowId), name);
      const read = async (name: string) => (await readFile(path.join(dir, name), 'utf8')).trim();
      return { gpus: await read('gpus'), start: Number(await read('start')), end: Number(await read('end')) };
    },
  };
}

describe('compute queue: GPU slots (ASSAY_LOCAL_GPUS=0,1,2)', () => {
  let world: Orchestration;
  const q = queueWorld(() => world);
  let key: string;

  before(async () => {
    world = await startOrchestration({ serviceEnv: { ASSAY_LOCAL_GPUS: '0,1,2' } });
    await world.startWorker();
    key = (await world.svc.createUser()).key;
  });
  after(async () => {
    await q.openAll();
    await world?.close();
  });

  test('two runs asking 2 GPUs each never overlap and never share one; the second shows its place while it waits', async () => {
    const first = await q.provisioned(key, { command: recording('gate'), gpus: 2 });
    await q.waitFor(first, (r) => r.state === 'running', 'running');
    const second = await q.provisioned(key, { command: recording(0.2), gpus: 2 });
    const waiting = await q.waitFor(second, (r) => r.queue !== null, 'a queue place');
    assert.equal(waiting.state, 'pending');
    assert.deepEqual(
      { position: waiting.queue.position, waiting: waiting.queue.waiting, gpus: waiting.queue.gpus },
      { position: 1, waiting: 1, gpus: 2 },
    );
    assert.ok(Date.parse(waiting.queue.since) <= Date.now());
    // The list answers the same place.
    const listed = await world.svc
      .as(key)
      .get(`/experiments/${second.experimentId}/variations/${second.n}/runs`);
    assert.deepEqual(listed.body.items[0].queue, waiting.queue);
    assert.equal((await q.get(first)).queue, null, 'a running run waits for nothing');
    await q.open(first);

    for (const run of [first, second]) assert.equal((await q.result(run)).state, 'succeeded');
    const [a, b] = [await q.outputs(first), await q.outputs(second)];
    for (const seen of [a, b]) {
      const ids = seen.gpus.split(',').map(Number);
      assert.equal(ids.length, 2, seen.gpus);
      assert.equal(new Set(ids).size, 2, seen.gpus);
      for (const id of ids) assert.ok([0, 1, 2].includes(id), seen.gpus);
    }
    assert.ok(b.start >= a.end, `the second started (${b.start}) after the first ended (${a.end})`);
    assert.equal((await q.get(second)).queue, null);
  });

  test('GPUs held at once are never shared: a 2-GPU and a 1-GPU run together hold all three', async () => {
    const two = await q.provisioned(key, { command: recording('gate'), gpus: 2 });
    const one = await q.provisioned(key, { command: recording('gate'), gpus: 1 });
    for (const run of [two, one]) await q.waitFor(run, (r) => r.state === 'running', 'running');
    // Both commands have begun before either may end: they hold their GPUs at the same time.
    for (const run of [two, one]) await q.begun(run);
    for (const run of [two, one]) await q.open(run);
    for (const run of [two, one]) assert.equal((await q.result(run)).state, 'succeeded');
    const [a, b] = [await q.outputs(two), await q.outputs(one)];
    assert.ok(a.start < b.end && b.start < a.end, 'they ran at the same time');
    assert.deepEqual([...a.gpus.split(','), b.gpus].map(Number).sort(), [0, 1, 2]);
  });

  test('a run asking no GPU on a machine with GPUs sees none (CUDA_VISIBLE_DEVICES empty)', async () => {
    const run = await q.provisioned(key, { command: recording(0) });
    assert.equal((await q.result(run)).state, 'succeeded');
    assert.equal((await q.outputs(run)).gpus, '');
  });

  test('a run asking more GPUs than the machine has is refused at once: provision and sweep create answer 422', async () => {
    const run = await q.pendingRun(key, { command: 'true', gpus: 4 });
    const res = await world.svc.as(key).post(`${q.runPath({ ...run, workflowId: '' })}/provision`);
    assert.equal(res.status, 422, JSON.stringify(res.body));
    assert.equal(res.body.error.code, 'launch_not_allowed');
    assert.equal(res.body.error.details.field, 'launch.gpus');
    assert.match(res.body.error.message, /ASSAY_LOCAL_GPUS/);
    assert.equal((await q.get({ ...run, workflowId: '' })).managed, false, 'nothing was provisioned');

    const draft = await world.svc.as(key).post('/experiments', { name: 'big', organization_id: 'personal' });
    const sweep = await world.svc.as(key).post(`/experiments/${draft.body.id}/sweeps`, {
      base_yaml: stringify({ lr: 0.1, launch: { command: 'true', gpus: 4 } }),
      grid: { lr: [0.1, 0.2] },
    });
    assert.equal(sweep.status, 422, JSON.stringify(sweep.body));
    assert.equal(sweep.body.error.details.field, 'launch.gpus');
  });

  test('a sweep’s priority goes to every run it makes', async () => {
    const draft = await world.svc
      .as(key)
      .post('/experiments', { name: 'urgent', organization_id: 'personal' });
    const sweep = await world.svc.as(key).post(`/experiments/${draft.body.id}/sweeps`, {
      base_yaml: stringify({ lr: 0.1, launch: { command: 'true' } }),
      grid: { lr: [0.1, 0.2] },
      priority: 7,
    });
    assert.equal(sweep.status, 202, JSON.stringify(sweep.body));
    for (const run of sweep.body.runs) {
      const body = (
        await world.svc.as(key).get(`/experiments/${draft.body.id}/variations/${run.n}/runs/${run.r}`)
      ).body;
      assert.equal(body.priority, 7);
    }
    await world.env.client.workflow.getHandle(sweep.body.workflow_id).result();
  });
});

describe('compute queue: run slots (ASSAY_LOCAL_MAX_RUNS=1)', () => {
  let world: Orchestration;
  const q = queueWorld(() => world);
  let alice: { id: string; key: string };
  let bob: { id: string; key: string };
  let restarted: TestService | undefined;
  let home: string;

  before(async () => {
    world = await startOrchestration({ serviceEnv: { ASSAY_LOCAL_GPUS: 'none', ASSAY_LOCAL_MAX_RUNS: '1' } });
    await world.startWorker();
    alice = await world.svc.createUser();
    bob = await world.svc.createUser();
    home = await tempHome();
  });
  after(async () => {
    await q.openAll();
    await restarted?.close();
    await world?.close();
    await rm(home, { recursive: true, force: true });
  });

  // One run holds the only slot behind a gate: a test that fails half-way must not leave it held for the next.
  afterEach(() => q.openAll());

  const started = async (runs: QueuedRun[]) => {
    const seen = await Promise.all(runs.map(async (run) => ({ run, at: (await q.outputs(run)).start })));
    return seen.sort((a, b) => a.at - b.at).map((s) => s.run);
  };

  test('two users’ runs wait with their places and are granted in turns; the CLI shows the place', async () => {
    const a0 = await q.provisioned(alice.key, { command: recording('gate') });
    await q.waitFor(a0, (r) => r.state === 'running', 'running');
    const a1 = await q.queued(alice.key, { command: recording(0.3) });
    const a2 = await q.queued(alice.key, { command: recording(0.3) });
    const b1 = await q.queued(bob.key, { command: recording(0.3) });
    const b2 = await q.queued(bob.key, { command: recording(0.3) });
    // Alice holds the slot: Bob goes first, then they alternate.
    const places = [];
    for (const run of [b1, a1, b2, a2]) places.push((await q.get(run)).queue);
    assert.deepEqual(
      places.map((p) => [p?.position, p?.waiting, p?.gpus]),
      [
        [1, 4, 0],
        [2, 4, 0],
        [3, 4, 0],
        [4, 4, 0],
      ],
    );
    const env = { SERVICE_SERVER_URL: world.svc.url!, SERVICE_API_KEY: alice.key };
    const shown = await runCli(['runs', 'show', a1.experimentId, String(a1.n), String(a1.r)], { home, env });
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /^queued\s+2nd of 4 \(waiting for a run slot\)$/m);
    const listed = await runCli(['runs', 'list', a1.experimentId, String(a1.n)], { home, env });
    assert.match(listed.stdout, /2nd of 4 \(waiting for a run slot\)/);
    await q.open(a0);

    for (const run of [a0, a1, a2, b1, b2]) assert.equal((await q.result(run)).state, 'succeeded');
    assert.deepEqual(
      (await started([a0, a1, a2, b1, b2])).map((r) => r.id),
      [a0, b1, a1, b2, a2].map((r) => r.id),
    );
    // One at a time.
    const outputs = await Promise.all([a0, b1, a1, b2, a2].map((r) => q.outputs(r)));
    for (let i = 1; i < outputs.length; i++) assert.ok(outputs[i]!.start >= outputs[i - 1]!.end);
  });

  test('a higher priority jumps the queue', async () => {
    const a0 = await q.provisioned(alice.key, { command: recording('gate') });
    await q.waitFor(a0, (r) => r.state === 'running', 'running');
    const a1 = await q.queued(alice.key, { command: recording(0.2) });
    const a2 = await q.queued(alice.key, { command: recording(0.2) });
    const urgent = await q.provisioned(alice.key, { command: recording(0.2) }, 10);
    assert.equal((await q.get(urgent)).priority, 10);
    await q.waitFor(urgent, (r) => r.queue?.position === 1, 'the head of the queue');
    await q.open(a0);
    for (const run of [a0, a1, a2, urgent]) assert.equal((await q.result(run)).state, 'succeeded');
    assert.deepEqual(
      (await started([a0, a1, a2, urgent])).map((r) => r.id),
      [a0, urgent, a1, a2].map((r) => r.id),
    );
    await recordHistory(world.env, urgent.workflowId, 'managed-run-queued-compute-queue');
  });

  test('a run cancelled while it waits leaves the queue at once, and the one behind it moves up', async () => {
    const a0 = await q.provisioned(alice.key, { command: recording('gate') });
    await q.waitFor(a0, (r) => r.state === 'running', 'running');
    const a1 = await q.queued(alice.key, { command: recording(0.2) });
    const a2 = await q.provisioned(alice.key, { command: recording(0.2) });
    await q.waitFor(a2, (r) => r.queue?.position === 2, 'second place');
    const cancelled = await world.svc.as(alice.key).post(`${q.runPath(a1)}/cancel`);
    assert.equal(cancelled.status, 200, JSON.stringify(cancelled.body));
    assert.deepEqual([cancelled.body.state, cancelled.body.failure_reason], ['failed', 'abandoned']);
    assert.equal(cancelled.body.queue, null);
    const behind = await q.get(a2);
    assert.deepEqual([behind.queue?.position, behind.queue?.waiting], [1, 1]);
    // Its saga ends while the slot is still held: the cancel reached the waiting run, not the next grant.
    const result = await q.result(a1);
    assert.deepEqual([result.state, result.failureReason, result.instanceId], ['failed', 'abandoned', null]);
    assert.equal((await q.get(a0)).state, 'running');
    assert.equal((await q.get(a2)).state, 'pending');
    await q.open(a0);
    for (const run of [a0, a2]) assert.equal((await q.result(run)).state, 'succeeded');
  });

  test('the queue survives a service restart: the waiting run is still granted', async () => {
    const a0 = await q.provisioned(alice.key, { command: recording('gate', 'seen') });
    await q.waitFor(a0, (r) => r.state === 'running', 'running');
    const b1 = await q.provisioned(bob.key, { command: recording(0.2, 'seen') });
    await q.waitFor(b1, (r) => r.queue?.position === 1, 'the head of the queue');

    // Its storage is the restarted service's own (a new data dir): these commands upload no outputs.
    // The service goes down and comes back on the same database and port; the worker (a standalone one: its
    // key is the configured ASSAY_ORCHESTRATOR_KEY, which a restart keeps) and the runners carry on.
    const port = Number(new URL(world.svc.url!).port);
    const primary = world.svc;
    await primary.service.close();
    // Closed already; the primary's own close() still drops its database once the restarted one is closed.
    primary.service.close = async () => undefined;
    const back = await startTestService({
      replicaOf: primary,
      listen: true,
      port,
      env: {
        ASSAY_LOCAL_COMPUTE_USERS: 'all',
        ASSAY_LOCAL_GPUS: 'none',
        ASSAY_LOCAL_MAX_RUNS: '1',
        ASSAY_ORCHESTRATOR_KEY: world.orchestratorKey,
      },
    });
    restarted = back;
    const after = (await back.as(bob.key).get(q.runPath(b1))).body;
    assert.equal(after.state, 'pending');
    assert.equal(after.queue?.position, 1, 'still waiting, first in line');
    await q.open(a0);
    for (const run of [a0, b1]) {
      const result = await q.result(run);
      const detail = (await back.as(run.key).get(q.runPath(run))).body;
      assert.equal(result.state, 'succeeded', JSON.stringify(detail));
    }
    assert.ok((await q.outputs(b1, 'seen')).start >= (await q.outputs(a0, 'seen')).end);
  });
});
