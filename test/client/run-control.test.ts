// The client's `run.control()`: the long-poll over real HTTP, its wait beyond the client's own timeout, and a
// signal that abandons it (the service then frees the wait's place).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { APITimeoutError, Client } from '../../src/client/index.ts';
import { committedExperiment, runningRun } from '../support/fixtures.ts';
import { metric } from '../support/http-api.ts';
import { startTestService, type TestService } from '../support/service.ts';

describe('client: run.control()', () => {
  let t: TestService;
  let key: string;
  let experimentId: string;

  before(async () => {
    t = await startTestService({ listen: true, pglite: true });
    key = (await t.createUser()).key;
    experimentId = (await committedExperiment(t, key)).id;
  });
  after(() => t?.close());

  async function waitUntil(check: () => Promise<boolean>) {
    for (const deadline = Date.now() + 10_000; !(await check());) {
      assert.ok(Date.now() < deadline, 'timed out');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  const rOf = (run: { path: string }) => Number(run.path.split('/').pop());

  it('waits longer than the client timeout, answers a cancel, and a signal abandons a wait', async () => {
    // A client timeout of 1 s: the long-poll's own timeout is its wait plus that.
    const client = new Client({ serverUrl: t.url, apiKey: key, timeout: 1 });
    try {
      const run = client.run(experimentId, 1, rOf(await runningRun(t, key, experimentId)));
      const quiet = await run.control({ waitS: 2 });
      assert.deepEqual(quiet, { state: 'running', cancel_requested: false, cancel_reason: null });

      const abort = new AbortController();
      const abandoned = run.control({ waitS: 30, signal: abort.signal });
      await waitUntil(async () => (await metric(t, 'assay_run_control_waiting')) === 1);
      abort.abort();
      await assert.rejects(abandoned, APITimeoutError);
      // The service let go of the abandoned wait (its place counts against the cap).
      await waitUntil(async () => (await metric(t, 'assay_run_control_waiting')) === 0);

      const waiting = run.control({ waitS: 30 });
      await new Promise((resolve) => setTimeout(resolve, 200));
      await run.cancel();
      assert.deepEqual(await waiting, {
        state: 'running',
        cancel_requested: true,
        cancel_reason: 'cancelled',
      });
    } finally {
      client.close();
    }
  });
});
