import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startAssayServer, type AssayServer } from '../support/assay-server.ts';
import { launchChromium, screenshot } from '../support/browser.ts';
import { newSession, signIn } from './support.ts';

// Sweeps and the compare table in a real browser (Debian's Chromium) against a real `assay server` on the
// embedded default, whose local compute runs the bootstrap admin's managed runs.

// Each run writes outputs/metrics.json with a loss of 0.<variation number>, so the four losses differ.
const BASE_YAML = [
  'lr: 0.1',
  'seed: 1',
  'steps: 10',
  'launch:',
  `  command: 'mkdir -p outputs && echo "{\\"loss\\": 0.$ASSAY_VARIATION}" > outputs/metrics.json'`,
  '',
].join('\n');

describe('web UI in Chromium: sweeps and compare', () => {
  let dataDir: string;
  let server: AssayServer;
  let browser: Browser;
  let admin: { context: BrowserContext; page: Page };
  const dialogs: string[] = [];
  let sweepUrl = '';

  before(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'assay-web-sweeps-'));
    server = await startAssayServer({ ASSAY_DATA_DIR: dataDir });
    browser = await launchChromium();
    admin = await newSession(browser, dialogs);
    await signIn(admin.page, server, server.bootstrapKey!);
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('creates a 2×2 grid sweep on a draft, errors shown in place, and watches it finish without a reload', async () => {
    const { page } = admin;
    await page.getByRole('link', { name: 'New experiment' }).click();
    await page.getByLabel('Name').fill('lr × seed');
    await page.getByRole('button', { name: 'Create experiment' }).click();
    await page.getByRole('heading', { name: 'Create a sweep' }).waitFor();
    const form = page.locator('form', { has: page.getByRole('heading', { name: 'Create a sweep' }) });

    // A malformed axis is caught before anything is sent; a YAML error comes back from the server.
    await form.getByLabel('Base config YAML').fill('lr: [0.1\n');
    await form.getByLabel('Grid axes, one per line').fill('lr');
    await form.getByRole('button', { name: 'Create sweep' }).click();
    await form.getByRole('alert').getByText('line 1: write an axis as').waitFor();
    await form.getByLabel('Grid axes, one per line').fill('lr: 0.1, 0.01\nseed: 1, 2');
    await form.getByRole('button', { name: 'Create sweep' }).click();
    await form.getByRole('alert').getByText('The sweep was not created').waitFor();
    assert.equal(await form.getByRole('alert').locator('.error-code').innerText(), 'invalid_yaml');
    await screenshot(page, 'sweep-form-error');

    await form.getByLabel('Base config YAML').fill(BASE_YAML);
    await page.evaluate('window.stillTheSamePage = true');
    await form.getByRole('button', { name: 'Create sweep' }).click();
    await page.getByRole('heading', { name: 'Sweep', exact: true }).waitFor();
    sweepUrl = page.url();
    assert.match(sweepUrl, /\/ui\/experiments\/[0-9a-f-]+\/sweeps\/[0-9a-f-]+$/);
    await page.locator('tr[data-run]').nth(3).waitFor();
    assert.equal(await page.locator('tr[data-run]').count(), 4);
    const bar = page.getByRole('progressbar', { name: 'Progress' });
    assert.equal(await bar.getAttribute('aria-valuemax'), '4');
    await screenshot(page, 'sweep-running');

    await page.getByTestId('sweep-counts').getByText('4 succeeded').waitFor({ timeout: 180_000 });
    await page.getByTestId('sweep-counts').getByText('done').waitFor();
    assert.equal(await bar.getAttribute('aria-valuenow'), '4');
    assert.equal(await page.evaluate('window.stillTheSamePage'), true);
    assert.equal(await page.getByRole('button', { name: 'Cancel sweep' }).count(), 0);
    await screenshot(page, 'sweep-done');

    await page.locator('tr[data-run="1.1"]').getByRole('link', { name: '1.1' }).click();
    await page.getByRole('heading', { name: 'Run 1.1' }).waitFor();
    await page.goBack();
    await page.getByRole('heading', { name: 'Sweep', exact: true }).waitFor();
  });

  it('compares the sweep’s runs: the differing config, state, duration and loss, sorted by a header click', async () => {
    const { page } = admin;
    await page.getByRole('link', { name: 'Compare runs' }).click();
    await page.getByRole('heading', { name: 'Compare runs' }).waitFor();
    const table = page.locator('table.compare');
    const header = (name: string) => table.getByRole('columnheader', { name, exact: true });
    await header('metric loss').waitFor();
    // steps is 10 in every variation, so it is no column: only what differs is.
    // A header's text: its label, after the visually hidden "metric" of a metrics column, before the arrow.
    const headers = (await table.locator('thead th').allInnerTexts()).map((h) =>
      h
        .replace(/[▲▼]/g, '')
        .replace(/^metric\s+/, '')
        .trim(),
    );
    assert.deepEqual(headers, ['Run', 'Variation', 'lr', 'seed', 'State', 'Duration', 'loss']);

    const column = async (index: number) =>
      (await table.locator(`tbody tr td:nth-child(${index})`).allInnerTexts()).map((t) => t.trim());
    const lossIndex = headers.indexOf('loss') + 1;
    const lrIndex = headers.indexOf('lr') + 1;
    // Each run's metrics.json arrives on its own; '…' marks one still being read.
    await table.locator('td.col-metric', { hasText: '…' }).first().waitFor({ state: 'detached' });
    assert.deepEqual(await column(lossIndex), ['0.1', '0.2', '0.3', '0.4']);
    assert.deepEqual(await column(1), ['1.1', '2.1', '3.1', '4.1']);
    assert.ok((await column(headers.indexOf('State') + 1)).every((s) => s === 'succeeded'));
    assert.equal(await header('Run').getAttribute('aria-sort'), 'ascending');

    await header('metric loss').getByRole('button').click();
    assert.equal(await header('metric loss').getAttribute('aria-sort'), 'ascending');
    assert.equal(await header('Run').getAttribute('aria-sort'), null);
    await header('metric loss').getByRole('button').click();
    assert.equal(await header('metric loss').getAttribute('aria-sort'), 'descending');
    assert.deepEqual(await column(lossIndex), ['0.4', '0.3', '0.2', '0.1']);

    // By keyboard: focus the lr header's button and press Enter; the two 0.01 runs come first.
    await header('lr').getByRole('button').focus();
    await page.keyboard.press('Enter');
    assert.equal(await header('lr').getAttribute('aria-sort'), 'ascending');
    const lrs = await column(lrIndex);
    assert.deepEqual(lrs, ['0.01', '0.01', '0.1', '0.1']);
    await screenshot(page, 'sweep-compare');
    assert.deepEqual(dialogs, []);
  });

  it('cancels a sweep: its runs end failed and the progress reaches done', async () => {
    const { page } = admin;
    await page.getByRole('link', { name: 'Experiments', exact: true }).click();
    await page.getByRole('link', { name: 'New experiment' }).click();
    await page.getByLabel('Name').fill('cancelled sweep');
    await page.getByRole('button', { name: 'Create experiment' }).click();
    const form = page.locator('form', { has: page.getByRole('heading', { name: 'Create a sweep' }) });
    await form.getByLabel('Base config YAML').fill('seed: 1\nlaunch:\n  command: sleep 300\n');
    await form.getByLabel('Strategy').selectOption('list');
    await form.getByLabel('Points, a JSON array').fill('[{"seed": 1}, {"seed": 2}]');
    await form.getByLabel('Concurrency').fill('1');
    await form.getByRole('button', { name: 'Create sweep' }).click();
    await page.getByRole('heading', { name: 'Sweep', exact: true }).waitFor();
    await page.getByTestId('sweep-counts').getByText('1 running').waitFor({ timeout: 60_000 });
    await page.getByRole('button', { name: 'Cancel sweep' }).click();
    await page.getByTestId('sweep-counts').getByText('2 failed').waitFor({ timeout: 120_000 });
    await page.getByTestId('sweep-counts').getByText('done').waitFor();
    // Failures by reason, from the runs' states: the run never started was abandoned.
    await page
      .getByTestId('sweep-failures')
      .getByText(/abandoned: [12]/)
      .waitFor();
    assert.equal(await page.getByRole('button', { name: 'Cancel sweep' }).count(), 0);
    await screenshot(page, 'sweep-cancelled');
  });
});
