import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { stringify } from 'yaml';
import { mintEmbeddedOrchestratorKey } from '../../src/server/orchestration/orchestrator-keys.ts';
import { launchChromium, screenshot } from '../support/browser.ts';
import { FakeOrchestrator } from '../support/fake-orchestrator.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { newSession, signIn } from './support.ts';

// A run waiting in the `local` compute queue, on its page in a real browser (Debian's Chromium): its place,
// and the GPUs it waits for. The queue is filled through the service's own routes: the researcher's
// provision, then the saga's ask for a slot (POST /orchestrator/runs/{id}/slot) with the orchestrator key.

describe('web UI in Chromium: a run waiting in the compute queue', () => {
  let t: TestService;
  let browser: Browser;
  let orchestratorKey: string;
  let user: { key: string };
  const dialogs: string[] = [];

  before(async () => {
    // PGlite, the embedded default: the queue's lock and arrays work there as on PostgreSQL.
    t = await startTestService({
      pglite: true,
      listen: true,
      orchestrator: new FakeOrchestrator(),
      env: { ASSAY_LOCAL_COMPUTE_USERS: 'all', ASSAY_LOCAL_GPUS: '0,1', ASSAY_LOCAL_MAX_RUNS: '1' },
    });
    orchestratorKey = (await mintEmbeddedOrchestratorKey(t.service.db)).token;
    user = await t.createUser();
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  it('shows the waiting run’s place and GPU ask, and nothing once it is granted', async () => {
    const api = t.as(user.key);
    const experiment = await api.post('/experiments', { name: 'queued', organization_id: 'personal' });
    const base = `/experiments/${experiment.body.id}/variations`;
    const variation = await api.post(base, {
      config_yaml: stringify({ lr: 0.1, launch: { command: 'python train.py', gpus: 2 } }),
    });
    assert.equal(variation.status, 201, JSON.stringify(variation.body));
    assert.equal((await api.post(`/experiments/${experiment.body.id}/commit`)).status, 200);
    const runs = [];
    for (let i = 0; i < 2; i++) {
      const run = (await api.post(`${base}/1/runs`)).body;
      const provisioned = await api.post(`${base}/1/runs/${run.r}/provision`, { priority: 3 });
      assert.equal(provisioned.status, 202, JSON.stringify(provisioned.body));
      assert.equal(provisioned.body.run.priority, 3);
      runs.push(run);
    }
    const slot = (id: string) => t.as(orchestratorKey).post(`/orchestrator/runs/${id}/slot`);
    const first = await slot(runs[0].id);
    assert.deepEqual(first.body, { state: 'granted', queued: true, gpu_ids: [0, 1], queue: null });
    assert.deepEqual((await slot(runs[0].id)).body, first.body, 'asking again answers the same grant');
    const second = await slot(runs[1].id);
    assert.equal(second.body.state, 'waiting', JSON.stringify(second.body));
    assert.deepEqual(
      [second.body.queue.position, second.body.queue.waiting, second.body.queue.gpus],
      [1, 1, 2],
    );

    const { page } = await newSession(browser, dialogs);
    await signIn(page, t as never, user.key);
    await page.goto(`${t.url}/ui/experiments/${experiment.body.id}/variations/1/runs/${runs[1].r}`);
    const place = page.locator('.queue-place');
    await place.waitFor();
    assert.match(await place.innerText(), /^Queued: 1st of 1 \(waiting for 2 GPUs\), since /);
    assert.equal(await page.locator('.badge.queued').innerText(), 'queued 1/1');
    await screenshot(page, 'run-queued');

    // The first run ends and leaves the queue: the waiting one is granted the same GPUs.
    const released = await t.as(orchestratorKey).delete(`/orchestrator/runs/${runs[0].id}/slot`);
    assert.deepEqual(released.body, { released: true });
    assert.deepEqual((await slot(runs[1].id)).body.gpu_ids, [0, 1]);
    await page.reload();
    await page.getByRole('heading', { name: `Run 1.${runs[1].r}` }).waitFor();
    assert.equal(await page.locator('.queue-place').count(), 0);
    assert.deepEqual(dialogs, []);
  });
});
