// `local`'s slot runners (src/compute/local-slots.ts): one long-lived runner per concurrent run, sandboxed as
// the run user, carrying managed runs one after another. Real Temporal, service, bubblewrap and runners.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { localCompute } from '../../src/compute/local-config.ts';
import { startOrchestration, type Orchestration } from '../support/orchestration.ts';
import { managedRunWorld, type PendingRun } from '../support/managed-runs.ts';

describe('slot runners in the sandbox', () => {
  let world: Orchestration;
  let m: ReturnType<typeof managedRunWorld>;
  const { sandbox } = localCompute({ ASSAY_LOCAL_SANDBOX: 'on', PATH: process.env.PATH });
  const runAs = sandbox.mode === 'bwrap' ? sandbox.runAs : undefined;

  before(async () => {
    world = await startOrchestration({
      sandbox,
      saga: { startTimeoutMs: 20_000, silenceTimeoutMs: 5_000, maxRecoveries: 0 },
    });
    await world.startWorker();
    m = managedRunWorld(world);
  });
  after(async () => {
    await m?.assertNoInstanceLeft();
    await world?.close();
  });

  /** A run of a new experiment, or the next run of `after`'s variation (same experiment, same author). */
  const run = async (command: string, after?: PendingRun) => {
    const pending = after ? await nextRun(after) : await m.pendingRun(command);
    const provisioned = await m.provision(pending);
    assert.equal(provisioned.status, 202, JSON.stringify(provisioned.body));
    return { pending, workflowId: provisioned.body.workflow_id as string };
  };
  const nextRun = async (before: PendingRun): Promise<PendingRun> => {
    const created = await m
      .svc()
      .as(m.key())
      .post(`/experiments/${before.experimentId}/variations/${before.n}/runs`);
    assert.equal(created.status, 201, JSON.stringify(created.body));
    return { ...before, id: created.body.id, r: created.body.r };
  };
  /** A command that runs `first` as the variation's first run and `then` as every later one. */
  const byRun = (first: string, then: string) => `if [ "$ASSAY_RUN" = 1 ]; then ${first}; else ${then}; fi`;
  const logOf = async (pending: PendingRun) =>
    (
      await m
        .svc()
        .as(m.key())
        .get(`${m.runPath(pending)}/logs`)
    ).body.lines
      .map((l: any) => l.text)
      .join('\n');
  const instanceOf = async (pending: PendingRun) => (await m.getRun(pending)).instance.instance_id;

  test('runs one after another in one runner, each as the run user, with its log and metrics', async () => {
    const first = await run(
      byRun('id -u; echo \'{"step": 1, "loss": 0.5}\' >> "$ASSAY_METRICS_FILE"', 'id -u'),
    );
    assert.equal((await m.result(first.workflowId)).state, 'succeeded', await logOf(first.pending));
    const second = await run('', first.pending);
    assert.equal((await m.result(second.workflowId)).state, 'succeeded', await logOf(second.pending));
    for (const { pending } of [first, second]) assert.equal(await logOf(pending), String(runAs?.uid));
    assert.notEqual(runAs?.uid, process.getuid?.(), 'the run user is not the service’s');
    assert.equal(await instanceOf(first.pending), await instanceOf(second.pending), 'the same slot runner');
    const metrics = await m
      .svc()
      .as(m.key())
      .get(`${m.runPath(first.pending)}/metrics/loss?limit=10`);
    assert.equal(metrics.status, 200, JSON.stringify(metrics.body));
    assert.match(JSON.stringify(metrics.body), /0\.5/);
  });

  test('nothing of a run is left for the next: its processes, /tmp, its directory', async () => {
    const check = [
      'test -e /tmp/left && echo "tmp: left";',
      // Spelled apart so that the command line of the shell that runs this does not match itself.
      'for p in /proc/[0-9]*; do grep -q "sle""ep" $p/cmdline 2>/dev/null && echo "process: left"; done;',
      'test "$(ls .. | wc -l)" = 1 || echo "dirs: $(ls ..)";',
      'echo checked',
    ].join(' ');
    const first = await run(byRun('"sle""ep" 300 & echo secret > /tmp/left; echo mine > mine.txt', check));
    assert.equal((await m.result(first.workflowId)).state, 'succeeded', await logOf(first.pending));
    const second = await run('', first.pending);
    assert.equal((await m.result(second.workflowId)).state, 'succeeded', await logOf(second.pending));
    assert.equal(await instanceOf(first.pending), await instanceOf(second.pending), 'the same slot runner');
    assert.equal(await logOf(second.pending), 'checked');
  });

  test('a run of another experiment never gets a runner that ran someone else’s code', async () => {
    const first = await run('true');
    assert.equal((await m.result(first.workflowId)).state, 'succeeded');
    const other = await run('true');
    assert.equal((await m.result(other.workflowId)).state, 'succeeded');
    assert.notEqual(await instanceOf(first.pending), await instanceOf(other.pending), 'a runner of its own');
  });

  test('a cancel stops the command and the runner takes the next run', async () => {
    const first = await run(byRun('sleep 60', 'true'));
    await m.waitForState(first.pending, 'running');
    const cancelled = await m
      .svc()
      .as(m.key())
      .post(`${m.runPath(first.pending)}/cancel`);
    assert.equal(cancelled.status, 200, JSON.stringify(cancelled.body));
    const result = await m.result(first.workflowId);
    assert.deepEqual([result.state, result.failureReason], ['failed', 'abandoned']);
    const second = await run('', first.pending);
    assert.equal((await m.result(second.workflowId)).state, 'succeeded');
    assert.equal(await instanceOf(first.pending), await instanceOf(second.pending), 'the same slot runner');
  });

  test('a runner that dies takes its run with it, and the next run gets a new one', async () => {
    const first = await run(byRun('sleep 60', 'true'));
    await m.waitForState(first.pending, 'running');
    await m.killInstance(first.workflowId);
    const result = await m.result(first.workflowId);
    assert.equal(result.state, 'failed');
    const second = await run('', first.pending);
    assert.equal((await m.result(second.workflowId)).state, 'succeeded', await logOf(second.pending));
    assert.notEqual(await instanceOf(first.pending), await instanceOf(second.pending), 'a new slot runner');
  });
});
