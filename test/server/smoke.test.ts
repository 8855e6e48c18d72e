import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { committedExperiment, runningRun } from '../support/fixtures.ts';
import { startTestService, type TestService } from '../support/service.ts';

for (const driver of ['postgres', 'pglite'] as const) {
  describe(`lifecycle smoke on ${driver}`, () => {
    let t: TestService;
    before(async () => {
      t = await startTestService({ pglite: driver === 'pglite' });
    });
    after(() => t.close());

    it('runs an experiment from creation to a succeeded run', async () => {
      const api = t.as(t.adminKey);
      const experiment = await committedExperiment(t, t.adminKey);
      const run = await runningRun(t, t.adminKey, experiment.id);
      const beat = await api.post(`${run.path}/heartbeat`);
      assert.equal(beat.status, 200);
      assert.deepEqual(
        { state: beat.body.state, cancel_requested: beat.body.cancel_requested },
        { state: 'running', cancel_requested: false },
      );
      const done = await api.post(`${run.path}/succeed`);
      assert.equal(done.status, 200);
      assert.equal(done.body.state, 'succeeded');
      const detail = await api.get(`/experiments/${experiment.id}`);
      assert.deepEqual(detail.body.run_counts, { pending: 0, running: 0, succeeded: 1, failed: 0 });
    });
  });
}
