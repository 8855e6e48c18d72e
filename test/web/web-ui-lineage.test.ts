import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startAssayServer, type AssayServer } from '../support/assay-server.ts';
import { launchChromium, screenshot } from '../support/browser.ts';
import { api, newSession, signIn } from './support.ts';

// The lineage graph and a run's assets in a real browser (Debian's Chromium) against a real `assay server`
// on the embedded default (PGlite, local storage).

describe('web UI in Chromium: lineage graph and run assets', () => {
  let dataDir: string;
  let server: AssayServer;
  let key: string;
  let browser: Browser;
  let session: { context: BrowserContext; page: Page };
  const dialogs: string[] = [];

  async function must(method: string, url: string, body?: unknown, status = 200) {
    const res = await api(server, key, method, url, body);
    assert.equal(res.status, status, `${method} ${url}: ${JSON.stringify(res.body)}`);
    return res.body;
  }

  before(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'assay-web-lineage-'));
    server = await startAssayServer({ ASSAY_DATA_DIR: dataDir });
    key = server.bootstrapKey!;
    browser = await launchChromium();
    session = await newSession(browser, dialogs);
    await signIn(session.page, server, key);
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('draws parent and child with dagre, changes depth, and a click on a node opens that experiment', async () => {
    const { page } = session;
    const grandparent = await must('POST', '/experiments', { name: 'Tokenizer ablation' }, 201);
    const parent = await must(
      'POST',
      '/experiments',
      { name: 'Baseline tokenizer', parent_ids: [grandparent.id] },
      201,
    );
    const child = await must(
      'POST',
      '/experiments',
      { name: 'Tokenizer follow-up with a longer name than fits', parent_ids: [parent.id] },
      201,
    );

    await page.goto(`${server.url}/ui/experiments/${child.id}`);
    await page.getByRole('heading', { name: child.name }).waitFor();
    await page.getByRole('link', { name: 'Lineage graph' }).click();
    await page.waitForURL(`${server.url}/ui/experiments/${child.id}/lineage`);
    await page.getByRole('heading', { name: 'Lineage', exact: true }).waitFor();

    const node = (id: string) => page.locator(`a.lineage-node[data-experiment-id="${id}"]`);
    await node(child.id).waitFor();
    assert.equal(await page.locator('a.lineage-node').count(), 3);
    assert.equal(await page.locator('.lineage-edge').count(), 2);
    assert.equal(await node(child.id).getAttribute('aria-current'), 'page');
    assert.equal(await node(parent.id).getAttribute('aria-label'), 'Baseline tokenizer (ancestor, draft)');
    // The layout, not fixed slots: each ancestor sits above its child.
    const top = async (id: string) => (await node(id).locator('rect').boundingBox())!.y;
    const [gy, py, cy] = [await top(grandparent.id), await top(parent.id), await top(child.id)];
    assert.ok(gy < py && py < cy, `grandparent ${gy}, parent ${py}, child ${cy}`);
    assert.match((await node(child.id).locator('.lineage-name').textContent()) ?? '', /…$/);
    await screenshot(page, 'lineage-graph');

    // Depth 1 leaves the grandparent out.
    await page.getByLabel('Depth').selectOption('1');
    await node(grandparent.id).waitFor({ state: 'detached' });
    assert.equal(await page.locator('a.lineage-node').count(), 2);
    await node(parent.id).waitFor();

    // Keyboard focus reaches a node, and a click navigates inside the app.
    await page.getByLabel('Depth').focus();
    await page.keyboard.press('Tab');
    assert.ok(await node(parent.id).evaluate((el) => el === el.ownerDocument.activeElement));
    await node(parent.id).click();
    await page.waitForURL(`${server.url}/ui/experiments/${parent.id}`);
    await page.getByRole('heading', { name: 'Baseline tokenizer' }).waitFor();
    assert.deepEqual(dialogs, []);
  });

  it('says so when an experiment has no relatives', async () => {
    const { page } = session;
    const alone = await must('POST', '/experiments', { name: 'Standalone probe' }, 201);
    await page.goto(`${server.url}/ui/experiments/${alone.id}/lineage`);
    await page.getByText('no parents and no children yet').waitFor();
    assert.equal(await page.locator('a.lineage-node').count(), 0);
  });

  it('lists a run’s output and checkpoint with working downloads', async () => {
    const { page } = session;
    const experiment = await must('POST', '/experiments', { name: 'Asset run' }, 201);
    const exp = `/experiments/${experiment.id}`;
    await must('POST', `${exp}/variations`, { config_yaml: 'lr: 0.1\n' }, 201);
    await must('POST', `${exp}/commit`);
    const run = await must('POST', `${exp}/variations/1/runs`, undefined, 201);
    const runPath = `${exp}/variations/1/runs/${run.r}`;
    await must('GET', `${runPath}/config`);
    await must('POST', `${runPath}/start`, { environment: {} });
    const address = { experiment_id: experiment.id, n: 1, r: run.r };

    const metrics = '{"loss": 0.125, "accuracy": 0.91}';
    await must(
      'POST',
      '/assets',
      { kind: 'output', name: 'metrics', run: address, content: metrics, content_type: 'application/json' },
      201,
    );
    // A checkpoint the way a runner uploads one: presigned PUT straight to storage, then finalize.
    const weights = Buffer.from('fake weights '.repeat(100));
    const checkpoint = await must(
      'POST',
      '/assets',
      {
        kind: 'checkpoint',
        name: 'step-1000',
        run: address,
        presign: true,
        components: [{ name: 'model.bin', size: weights.length }],
      },
      201,
    );
    const target = checkpoint.uploads['model.bin'];
    const put = await fetch(target.url, { method: 'PUT', headers: target.headers, body: weights });
    assert.ok(put.ok, `upload: HTTP ${put.status}`);
    await must('PUT', `/assets/${checkpoint.id}/finalize`);
    // One still uploading: listed, without a download.
    await must(
      'POST',
      '/assets',
      {
        kind: 'checkpoint',
        name: 'step-2000',
        run: address,
        presign: true,
        components: [{ name: 'model.bin', size: 5 }],
      },
      201,
    );

    await page.goto(`${server.url}/ui${runPath}`);
    await page.getByRole('heading', { name: 'Assets and checkpoints' }).waitFor();
    const table = page.getByRole('table', { name: 'Run assets' });
    await table.waitFor();
    assert.equal(await table.locator('tbody tr').count(), 3);
    await table
      .getByRole('row', { name: /step-2000/ })
      .getByText('uploading')
      .waitFor();
    assert.equal(
      await table
        .getByRole('row', { name: /step-2000/ })
        .getByRole('button')
        .count(),
      0,
    );
    await screenshot(page, 'run-assets');

    const [metricsFile] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download content of metrics' }).click(),
    ]);
    assert.equal(await readFile((await metricsFile.path())!, 'utf8'), metrics);
    const [weightsFile] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download model.bin of step-1000' }).click(),
    ]);
    assert.equal(weightsFile.suggestedFilename(), 'model.bin');
    assert.deepEqual(await readFile((await weightsFile.path())!), weights);
    // The page stays: the download did not navigate away.
    assert.equal(page.url(), `${server.url}/ui${runPath}`);
    assert.deepEqual(dialogs, []);
  });

  it('shows the empty state on a run with no assets', async () => {
    const { page } = session;
    const experiment = await must('POST', '/experiments', { name: 'Quiet run' }, 201);
    const exp = `/experiments/${experiment.id}`;
    await must('POST', `${exp}/variations`, { config_yaml: 'lr: 0.2\n' }, 201);
    await must('POST', `${exp}/commit`);
    const run = await must('POST', `${exp}/variations/1/runs`, undefined, 201);
    await page.goto(`${server.url}/ui${exp}/variations/1/runs/${run.r}`);
    await page.getByText('This run has no assets yet').waitFor();
    await page.getByText(`--variation 1 --run ${run.r} --kind output FILE`).waitFor();
  });
});
