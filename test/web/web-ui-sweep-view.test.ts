import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { mintEmbeddedOrchestratorKey } from '../../src/server/orchestration/orchestrator-keys.ts';
import { eventually } from '../support/bounded-waits.ts';
import { launchChromium, screenshot } from '../support/browser.ts';
import { FakeOrchestrator } from '../support/fake-orchestrator.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { workerKeyThroughExchange } from '../support/worker-key-exchange.ts';
import { newSession, signIn } from './support.ts';

// The researchers' view of a sweep in a real browser: the sweep list on the experiment page, the sweep
// page's progress, best trial, plots and trials, and cancel. The service has a fake orchestrator, so the
// test plays the sweep's runners and workflow through the API: runs start, log the objective through their
// worker keys, succeed, crash, or are stopped early by the orchestrator's key.

const BASE_YAML = 'lr: 0.1\nopt: sgd\nlaunch:\n  command: python train.py\n';
const POINTS = [
  { lr: 0.1, opt: 'sgd' },
  { lr: 0.03, opt: 'adam' },
  { lr: 0.01, opt: 'sgd' },
  { lr: 0.003, opt: 'adam' },
  { lr: 0.001, opt: 'sgd' },
  { lr: 0.0003, opt: 'adam' },
];

describe('web UI in Chromium: the researchers’ view of a sweep', () => {
  let t: TestService;
  let fake: FakeOrchestrator;
  let orchestratorKey: string;
  let browser: Browser;
  let session: { context: BrowserContext; page: Page };
  const dialogs: string[] = [];
  let experimentId = '';
  let sweepUrl = '';

  before(async () => {
    fake = new FakeOrchestrator();
    t = await startTestService({ orchestrator: fake, listen: true });
    orchestratorKey = (await mintEmbeddedOrchestratorKey(t.service.db)).token;
    browser = await launchChromium();
    session = await newSession(browser, dialogs);
    await signIn(session.page, { url: t.url! }, t.adminKey);
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  /** Run n.1 of the sweep as its runner drives it: started, the objective logged at each step, then `end`. */
  async function playRun(
    n: number,
    losses: number[],
    end: 'succeed' | 'crash' | 'stopped_early' | 'keep',
    { experiment = experimentId, key = 'val_loss' } = {},
  ) {
    const path = `/experiments/${experiment}/variations/${n}/runs/1`;
    const run = await t.as(t.adminKey).get(path);
    const worker = (await workerKeyThroughExchange(t, orchestratorKey, run.body.id)).key;
    const ok = async (p: Promise<{ status: number; body: unknown }>) => {
      const res = await p;
      assert.ok(res.status < 300, JSON.stringify(res.body));
    };
    await ok(t.as(worker).get(`${path}/config`));
    await ok(t.as(worker).post(`${path}/start`, {}));
    if (losses.length > 0) {
      const metrics = losses.map((value, i) => ({ key, step: i + 1, value }));
      await ok(t.as(worker).post(`${path}/metrics`, { metrics }));
    }
    if (end === 'succeed') await ok(t.as(worker).post(`${path}/succeed`));
    if (end === 'crash') await ok(t.as(worker).post(`${path}/fail`, { reason: 'crash' }));
    if (end === 'stopped_early')
      await ok(
        t.as(orchestratorKey).post(`/orchestrator/runs/${run.body.id}/fail`, { reason: 'stopped_early' }),
      );
  }

  it('creates a sweep from the form: a bad space is refused in place, a list with an objective is made', async () => {
    const { page } = session;
    await page.getByRole('link', { name: 'New experiment' }).click();
    await page.getByLabel('Name').fill('lr search');
    await page.getByRole('button', { name: 'Create experiment' }).click();
    const form = page.locator('form', { has: page.getByRole('heading', { name: 'Create a sweep' }) });
    await form.getByLabel('Base config YAML').fill(BASE_YAML);
    await form.getByLabel('Strategy').selectOption('random');

    // Text that is no space is caught before anything is sent; a distribution the service does not know
    // comes back as a 422 naming it.
    await form.getByLabel('Search space YAML').fill('lr: [1');
    await form.getByRole('button', { name: 'Create sweep' }).click();
    await form.getByRole('alert').getByText('the space is not YAML').waitFor();
    await form.getByLabel('Search space YAML').fill('lr: {distribution: beta, low: 0, high: 1}');
    await form.getByLabel('Trials', { exact: true }).fill('8');
    await form.getByRole('button', { name: 'Create sweep' }).click();
    // The same alert's title as the YAML error's: wait for the service's answer, which names the field.
    await form.getByRole('alert').getByText('/space/lr').waitFor();
    assert.equal(await form.getByRole('alert').locator('.error-code').innerText(), 'validation_failed');
    await screenshot(page, 'sweep-view-form-error');

    await form.getByLabel('Strategy').selectOption('list');
    await form.getByLabel('Points, a JSON array').fill(JSON.stringify(POINTS));
    await form.getByLabel('Objective metric').fill('val_loss');
    await form.getByLabel('Goal').selectOption('minimize');
    await form.getByLabel('Concurrency').fill('2');
    await form.getByRole('button', { name: 'Create sweep' }).click();
    await page.getByRole('heading', { name: 'Sweep', exact: true }).waitFor();
    sweepUrl = page.url();
    experimentId = /\/experiments\/([0-9a-f-]+)\/sweeps\//.exec(sweepUrl)![1]!;
    const facts = page.getByTestId('sweep-facts');
    await facts.getByText('val_loss (minimize)').waitFor();
    assert.equal(await page.locator('table.trials tbody tr').count(), 6);
    await page.getByTestId('sweep-counts').getByText('6 pending').waitFor();
  });

  it('shows progress by outcome, the best trial, the objective by trial, the space and the trials', async () => {
    const { page } = session;
    await playRun(1, [0.9, 0.7, 0.5], 'succeed');
    await playRun(2, [0.6, 0.3, 0.2], 'succeed');
    await playRun(3, [0.95, 0.9], 'stopped_early');
    await playRun(4, [], 'crash');
    await playRun(5, [0.8, 0.4], 'keep');

    const counts = page.getByTestId('sweep-counts');
    await counts.getByText('1 stopped early').waitFor({ timeout: 10_000 });
    assert.equal(
      (await counts.innerText()).replace(/\s+/g, ' ').trim(),
      '2 succeeded · 1 stopped early · 1 failed · 1 running · 1 pending · 6 in all',
    );
    const bar = page.getByRole('progressbar', { name: 'Progress' });
    assert.equal(await bar.getAttribute('aria-valuenow'), '4');

    // The best finished trial: its value, its point and a link to its run.
    const best = page.getByTestId('sweep-best');
    await best.getByText('0.2', { exact: true }).waitFor();
    assert.match(await best.innerText(), /lr\s+0\.03/);
    assert.match(await best.innerText(), /opt\s+adam/);

    // The trials table: each run's point, last objective, step reached and outcome; stopped early is no error.
    const row = (n: number) => page.locator(`table.trials tr[data-run="${n}.1"]`);
    const cells = async (n: number) => (await row(n).locator('td').allInnerTexts()).map((c) => c.trim());
    assert.deepEqual(await cells(2), ['2 ★', '2.1', '0.03', 'adam', '0.2', '3', 'succeeded']);
    assert.deepEqual(await cells(3), ['3', '3.1', '0.01', 'sgd', '0.9', '2', 'stopped early']);
    assert.deepEqual(await cells(4), ['4', '4.1', '0.003', 'adam', '—', '—', 'failed crash']);
    assert.deepEqual(await cells(5), ['5', '5.1', '0.001', 'sgd', '0.4', '2', 'running']);
    const colour = (n: number) =>
      row(n)
        .locator('.badge')
        .evaluate(
          (el: { ownerDocument: { defaultView: { getComputedStyle(e: unknown): { color: string } } } }) =>
            el.ownerDocument.defaultView.getComputedStyle(el).color,
        );
    const [stopped, failed] = [await colour(3), await colour(4)];
    assert.equal(failed, 'rgb(180, 35, 24)', 'a crash is shown as an error');
    assert.equal(stopped, 'rgb(87, 96, 106)', 'stopped early is shown in a neutral grey');

    // The objective against trial number: the two finished trials and the stopped one.
    const chart = page.getByTestId('objective-chart');
    await eventually(
      async () => (await chart.getAttribute('data-points')) === '3',
      10_000,
      'the objective chart',
    );
    await chart.getByRole('figure', { name: 'val_loss against trial number' }).waitFor();
    // The space: one axis per key and the objective, a line per trial (the crashed and pending ones too).
    const space = page.locator('.parallel-coordinates');
    assert.equal(await space.getAttribute('data-axes'), 'lr|opt|val_loss');
    assert.equal(await space.getAttribute('data-lines'), '6');
    await page.getByRole('img', { name: /Parallel coordinates of 6 trials over 3 axes/ }).waitFor();
    const described = await page
      .getByRole('img', { name: /Parallel coordinates/ })
      .getAttribute('aria-describedby');
    assert.match(
      await page.locator(`#${described}`).innerText(),
      /6 runs, with the last val_loss each logged/,
    );
    await screenshot(page, 'sweep-view-page');
  });

  it('lists the sweep on the experiment page with its progress and best value, and opens it by keyboard', async () => {
    const { page } = session;
    await page.getByRole('link', { name: '← Experiment' }).click();
    await page.getByRole('heading', { name: 'Sweeps' }).waitFor();
    const row = page.locator('table.sweeps tbody tr');
    await row.first().waitFor();
    assert.equal(await row.count(), 1);
    const cells = (await row.locator('td').allInnerTexts()).map((c) => c.trim());
    assert.match(cells[0]!, /^sweep [0-9a-f]{8}$/);
    assert.deepEqual(cells.slice(1, 4), [
      'list',
      '4 of 6 ended, 1 stopped early, 1 running',
      '0.2 val_loss (minimize)',
    ]);
    await screenshot(page, 'sweep-view-list');
    await row.getByRole('link').focus();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Sweep', exact: true }).waitFor();
    assert.equal(page.url(), sweepUrl);
  });

  it('cancels the sweep: the workflow is asked, and once its runs have ended the page says done', async () => {
    const { page } = session;
    await page.getByRole('button', { name: 'Cancel sweep' }).click();
    const workflowId = `sweep-${sweepUrl.split('/').at(-1)}`;
    await eventually(
      async () => fake.callsOf<string>('cancelSweep').includes(workflowId),
      10_000,
      'the sweep workflow asked to cancel',
    );
    // What the workflow does on a cancel: the runs still going end abandoned.
    for (const n of [5, 6]) {
      const run = await t.as(t.adminKey).get(`/experiments/${experimentId}/variations/${n}/runs/1`);
      const failed = await t
        .as(orchestratorKey)
        .post(`/orchestrator/runs/${run.body.id}/fail`, { reason: 'abandoned' });
      assert.equal(failed.status, 200, JSON.stringify(failed.body));
    }
    await page.getByTestId('sweep-counts').getByText('done').waitFor({ timeout: 10_000 });
    await page.getByTestId('sweep-failures').getByText('abandoned: 2').waitFor();
    assert.equal(await page.getByRole('button', { name: 'Cancel sweep' }).count(), 0);
    await screenshot(page, 'sweep-view-cancelled');
    assert.deepEqual(dialogs, []);
  });

  it('says on the sweep page when no run logs the objective metric, naming what the runs logged', async () => {
    const { page } = session;
    const draft = await t.as(t.adminKey).post('/experiments', { name: 'misspelt metric' });
    const created = await t.as(t.adminKey).post(`/experiments/${draft.body.id}/sweeps`, {
      strategy: 'list',
      base_yaml: BASE_YAML,
      list: POINTS.slice(0, 2),
      objective: { metric: 'val_acc', goal: 'maximize' },
    });
    assert.equal(created.status, 202, JSON.stringify(created.body));
    await playRun(1, [0.5], 'succeed', { experiment: draft.body.id, key: 'valid_acc' });
    await page.goto(`${t.url}/ui/experiments/${draft.body.id}/sweeps/${created.body.id}`);
    const warnings = page.getByRole('status', { name: 'Warnings' });
    await warnings.getByText('no run has logged the objective metric `val_acc`').waitFor();
    assert.match(await warnings.innerText(), /its runs logged `valid_acc`/);
    // Nothing to draw against the objective yet, and the page says so instead of an empty chart.
    await page.getByTestId('objective-chart').getByText('No trial has ended with a val_acc yet.').waitFor();
    await screenshot(page, 'sweep-view-warning');
  });
});
