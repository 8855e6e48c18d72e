// The embedded default, as `npm start` runs it (PGlite, its own Temporal, its in-process worker and search
// worker), runs a searching sweep with early stopping to the end: a researcher needs nothing else.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { stringify } from 'yaml';
import { startAssayServer, type AssayServer } from '../support/assay-server.ts';
import { eventually } from '../support/bounded-waits.ts';

// Logs a loss per epoch that gets worse with a larger lr, so the pruner has something to stop.
const TRAIN = `import json, os, time
config = json.load(open(os.environ['ASSAY_CONFIG_FILE']))['config_json']
with open(os.environ['ASSAY_METRICS_FILE'], 'a') as f:
    for step in range(1, 10):
        f.write(json.dumps({'step': step, 'val_loss': config['lr'] * 10 / step}) + '\\n')
        f.flush()
        time.sleep(0.2)
`;

describe('a searching sweep on the embedded default', () => {
  let dir: string;
  let server: AssayServer;
  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'assay-embedded-sweep-'));
    server = await startAssayServer({ ASSAY_DATA_DIR: path.join(dir, 'data'), ASSAY_LOG_LEVEL: 'warn' });
  });
  after(async () => {
    await server?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  test('random search with asha: every trial made, run and ended (succeeded or stopped early), a best', async () => {
    const call = async (method: string, url: string, body?: unknown) => {
      const res = await fetch(`${server.url}${url}`, {
        method,
        headers: { authorization: `Bearer ${server.bootstrapKey}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as any };
    };
    const experiment = await call('POST', '/experiments', { name: 'embedded', organization_id: 'personal' });
    const request = {
      // The program itself, as argv: the sandboxed command sees its working dir, not the test's files.
      base_yaml: stringify({ lr: 0.1, launch: { command: ['python3', '-c', TRAIN] } }),
      strategy: 'random',
      space: { lr: { distribution: 'log_uniform', low: 1e-3, high: 1 } },
      objective: { metric: 'val_loss', goal: 'minimize' },
      early_stopping: { kind: 'asha', min_step: 1, reduction_factor: 2 },
      trials: 5,
      concurrency: 2,
      seed: 11,
    };
    // The search worker starts beside the service: until it polls, a searching sweep is refused at once (503).
    let sweep: { status: number; body: any } | undefined;
    await eventually(
      async () => {
        sweep = await call('POST', `/experiments/${experiment.body.id}/sweeps`, request);
        if (sweep.status === 503) assert.equal(sweep.body.error.code, 'sampler_unavailable');
        return sweep.status !== 503;
      },
      60_000,
      'the search worker polls',
    );
    assert.equal(sweep!.status, 202, JSON.stringify(sweep!.body));
    const url = `/experiments/${experiment.body.id}/sweeps/${sweep!.body.id}`;
    let read: { status: number; body: any } | undefined;
    await eventually(async () => (read = await call('GET', url)).body.progress.done, 180_000, 'sweep done');
    const { progress, runs, best } = read!.body;
    assert.equal(runs.length, 5, JSON.stringify(runs));
    assert.deepEqual(
      runs.map((r: { trial: number }) => r.trial).sort(),
      [1, 2, 3, 4, 5],
      'one run per trial',
    );
    assert.equal(progress.succeeded + progress.stopped_early, 5, JSON.stringify(progress));
    for (const run of runs)
      assert.ok(run.params.lr >= 1e-3 && run.params.lr <= 1, `trial ${run.trial}'s lr ${run.params.lr}`);
    assert.ok(best, 'a best trial');
    assert.equal(
      best.value,
      Math.min(...runs.filter((r: any) => r.state === 'succeeded').map((r: any) => r.objective)),
    );
    const variations = (await call('GET', `/experiments/${experiment.body.id}/variations`)).body.items;
    assert.equal(variations.length, 5, 'the sweep made one variation per trial');
  });
});
