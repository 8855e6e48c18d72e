import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startAssayServer, type AssayServer } from '../support/assay-server.ts';
import { launchChromium, screenshot } from '../support/browser.ts';
import { api, newSession, signIn } from './support.ts';

// The assets page in a real browser (Debian's Chromium) against a real `assay server` on the embedded
// default: uploads go straight to the local store on presigned URLs, with a multipart threshold of 1 MiB so a
// larger file goes up in parts.

const MIB = 1024 * 1024;

// Browser-side code goes in as text: the tests are compiled without the DOM's types, and the page's CSP
// forbids the eval that waitForFunction's polling would need.

/** Records every value the page's upload progress bars take, from now on. */
async function watchProgress(page: Page): Promise<void> {
  await page.evaluate(`{
    const seen = (window.progressSeen = {});
    const record = () => {
      for (const li of document.querySelectorAll('.upload-list li')) {
        const value = li.querySelector('progress').value;
        const values = (seen[li.dataset.upload] ??= []);
        if (values.at(-1) !== value) values.push(value);
      }
    };
    new MutationObserver(record).observe(document.body, { subtree: true, childList: true, attributes: true });
  }`);
}

async function progressOf(page: Page, name: string): Promise<number[]> {
  return page.evaluate<number[]>(`window.progressSeen[${JSON.stringify(name)}]`);
}

/** Drops a text file on the drop zone the way a browser does: a DataTransfer carrying a File. */
async function dropFile(page: Page, name: string, type: string, content: string): Promise<void> {
  await page.evaluate(`{
    const zone = document.querySelector('[data-testid="drop-zone"]');
    const data = new DataTransfer();
    data.items.add(new File([${JSON.stringify(content)}], ${JSON.stringify(name)}, { type: ${JSON.stringify(type)} }));
    zone.dispatchEvent(new DragEvent('dragover', { dataTransfer: data, bubbles: true, cancelable: true }));
    zone.dispatchEvent(new DragEvent('drop', { dataTransfer: data, bubbles: true, cancelable: true }));
  }`);
}

/** Waits until the assets table shows `n` rows. */
async function rowsToBe(page: Page, n: number): Promise<void> {
  const rows = page.locator('table.assets tbody tr');
  for (let i = 0; i < 100 && (await rows.count()) !== n; i++) await page.waitForTimeout(50);
  assert.equal(await rows.count(), n);
}

async function downloadBytes(page: Page, buttonName: string): Promise<Buffer> {
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('button', { name: buttonName }).click(),
  ]);
  return readFile((await download.path())!);
}

describe('web UI in Chromium: assets', () => {
  let dataDir: string;
  let server: AssayServer;
  let key: string;
  let browser: Browser;
  let session: { context: BrowserContext; page: Page };
  const dialogs: string[] = [];

  before(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'assay-web-assets-'));
    server = await startAssayServer({
      ASSAY_DATA_DIR: dataDir,
      ASSAY_MULTIPART_THRESHOLD_BYTES: String(MIB),
      ASSAY_MULTIPART_PART_BYTES: String(MIB),
    });
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

  it('uploads a chosen file in parts with its progress to 100 %, and downloads the same bytes', async () => {
    const { page } = session;
    await page.getByRole('link', { name: 'Assets', exact: true }).click();
    await page.getByRole('heading', { name: 'Assets', exact: true }).waitFor();
    await page.getByText('No assets yet. Drop a file above').waitFor();
    await page.getByText('assay assets upload --kind document FILE').waitFor();
    await watchProgress(page);

    // A name the service would refuse as a component: it is kept as the asset name, cleaned for
    // the component.
    const bytes = randomBytes(Math.round(2.5 * MIB));
    await page.getByLabel('Kind of the new assets').selectOption('output');
    await page.getByLabel('choose files').setInputFiles({
      name: 'loss curve (final).bin',
      mimeType: 'application/octet-stream',
      buffer: bytes,
    });
    const row = page.locator('.upload-list li[data-upload="loss curve (final).bin"]');
    await page.waitForSelector('.upload-list li[data-state="ready"]');
    assert.equal(await row.locator('progress').getAttribute('value'), '100');
    assert.match(await row.innerText(), /100 %/);
    const seen = await progressOf(page, 'loss curve (final).bin');
    assert.equal(seen.at(-1), 100);
    assert.deepEqual(
      seen,
      [...seen].sort((a, b) => a - b),
      `progress never goes back: ${seen.join(', ')}`,
    );

    const table = page.locator('table.assets tbody tr');
    await rowsToBe(page, 1);
    assert.match(await table.innerText(), /loss curve \(final\)\.bin\s+output\s+ready\s+2\.5 MiB/);
    const listed = await api(server, key, 'GET', '/assets');
    const asset = listed.body.items[0];
    assert.equal(asset.state, 'ready');
    assert.equal(asset.name, 'loss curve (final).bin');
    assert.deepEqual(Object.keys(asset.components), ['loss_curve_final_.bin']);
    assert.equal(asset.components['loss_curve_final_.bin'].size, bytes.length);
    await screenshot(page, 'assets-uploaded');

    const downloaded = await downloadBytes(page, 'Download loss_curve_final_.bin of loss curve (final).bin');
    assert.ok(downloaded.equals(bytes), 'the download is the uploaded bytes');
    assert.deepEqual(dialogs, []);
  });

  it('uploads a dropped file linked to the chosen experiment, and filters by kind, state and experiment', async () => {
    const { page } = session;
    const experiment = await api(server, key, 'POST', '/experiments', { name: 'Dropout sweep' });
    assert.equal(experiment.status, 201, JSON.stringify(experiment.body));
    await page.reload();
    await page.getByRole('heading', { name: 'Assets', exact: true }).waitFor();
    await page.getByRole('search').getByLabel('Experiment').selectOption({ label: 'Dropout sweep' });
    await page.getByText('No asset matches these filters.').waitFor();
    await page.getByText('They are linked to the chosen experiment.').waitFor();
    await page.getByLabel('Kind of the new assets').selectOption('report');
    await watchProgress(page);

    const text = 'Dropout 0.1 beat 0.3 on every seed.\n';
    await dropFile(page, 'notes.txt', 'text/plain', text);
    await page.waitForSelector('.upload-list li[data-upload="notes.txt"][data-state="ready"]');
    assert.equal((await progressOf(page, 'notes.txt')).at(-1), 100);
    await rowsToBe(page, 1);
    assert.match(await page.locator('table.assets tbody tr').innerText(), /notes\.txt\s+report\s+ready/);

    const linked = await api(server, key, 'GET', `/assets?experiment_id=${experiment.body.id}`);
    assert.equal(linked.body.items.length, 1);
    assert.equal(linked.body.items[0].experiment_id, experiment.body.id);
    const downloaded = await downloadBytes(page, 'Download notes.txt of notes.txt');
    assert.equal(downloaded.toString('utf8'), text);

    // Filters: every asset again, then by kind, then by a state nothing is in.
    await page.getByRole('search').getByLabel('Experiment').selectOption('');
    await rowsToBe(page, 2);
    await page.getByRole('search').getByLabel('Kind').selectOption('output');
    await rowsToBe(page, 1);
    assert.match(await page.locator('table.assets tbody tr').innerText(), /loss curve/);
    await page.getByRole('search').getByLabel('State').selectOption('pending');
    await page.getByText('No asset matches these filters.').waitFor();
    await screenshot(page, 'assets-filtered');
    assert.deepEqual(dialogs, []);
  });
});
