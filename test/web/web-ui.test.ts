import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { repoRoot, startAssayServer, type AssayServer } from '../support/assay-server.ts';
import { launchChromium, screenshot } from '../support/browser.ts';
import { eventually } from '../support/bounded-waits.ts';

// The web UI in a real browser (Debian's Chromium) against a real `assay server` on the embedded default
// (PGlite, local storage, Temporal and a worker): each flow as a researcher goes through it.

const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };

describe('web UI in Chromium', () => {
  let dataDir: string;
  let server: AssayServer;
  let browser: Browser;
  let admin: { context: BrowserContext; page: Page };
  let other: { email: string; key: string; keyId: string };
  const dialogs: string[] = [];
  const seenUrls: string[] = [];
  let experimentUrl = '';

  async function newSession(viewport = DESKTOP) {
    const context = await browser.newContext({ viewport });
    const page = await context.newPage();
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    page.on('request', (r) => seenUrls.push(r.url()));
    page.on('framenavigated', (f) => seenUrls.push(f.url()));
    return { context, page };
  }

  async function signIn(page: Page, key: string) {
    await page.goto(`${server.url}/`);
    await page.getByLabel('API key or access token').fill(key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Experiments', exact: true }).waitFor();
  }

  async function createExperiment(page: Page, name: string, hypothesis: string) {
    await page.getByRole('link', { name: 'New experiment' }).click();
    await page.getByLabel('Name').fill(name);
    await page.getByLabel('Hypothesis').fill(hypothesis);
    await page.getByRole('button', { name: 'Create experiment' }).click();
    await page.getByRole('heading', { name: 'Variations' }).waitFor();
  }

  before(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'assay-web-'));
    server = await startAssayServer({ ASSAY_DATA_DIR: dataDir });
    const created = await fetch(`${server.url}/admin/users`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.bootstrapKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'grace@example.test' }),
    });
    assert.equal(created.status, 201);
    const body = (await created.json()) as { api_key: { id: string; key: string } };
    other = { email: 'grace@example.test', key: body.api_key.key, keyId: body.api_key.id };
    browser = await launchChromium();
    admin = await newSession();
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('signs in with the bootstrap key, kept in sessionStorage only', async () => {
    const { page } = admin;
    await page.goto(`${server.url}/`);
    await page.waitForURL(`${server.url}/ui/sign-in`);
    await screenshot(page, 'sign-in');
    await page.getByLabel('API key or access token').fill('sk_user_not-a-real-key');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').getByText('unauthenticated').waitFor();
    await signIn(page, server.bootstrapKey!);
    await page.getByTestId('current-user').getByText('admin').waitFor();
    await page
      .getByRole('combobox', { name: 'Scope' })
      .getByText('Personal (default)')
      .waitFor({ state: 'attached' });
    await page.getByText('No experiments in this scope yet').waitFor();
    await page.getByText('assay experiments create --name').waitFor();
    await screenshot(page, 'experiments-empty');
    const storage = await page.evaluate<{ session: string[]; local: number; cookie: string }>(
      '({ session: Object.keys(sessionStorage), local: localStorage.length, cookie: document.cookie })',
    );
    assert.ok(storage.session.includes('assay.credential'));
    assert.equal(storage.local, 0);
    assert.equal(storage.cookie, '');
  });

  it('creates an experiment, shows a YAML error at its line, adds a variation and commits', async () => {
    const { page } = admin;
    await createExperiment(page, 'Warmup matters', 'A 500-step warmup lowers the final loss');
    experimentUrl = page.url();
    await page.getByText('No variations yet').waitFor();
    await page
      .getByRole('textbox', { name: /^Config YAML/ })
      .fill('lr: 0.1\nsteps: [1, 2\nlaunch:\n  command: sleep 1\n');
    await page.getByRole('button', { name: 'Add variation' }).click();
    const alert = page.getByRole('alert');
    await alert.getByText('invalid_yaml').waitFor();
    assert.match(await alert.innerText(), /line 3, column 1/);
    const marked = page.locator('.yaml-excerpt .error-line');
    assert.equal(await marked.getAttribute('data-line'), '3');
    assert.match(await marked.innerText(), /3 \| launch:/);
    // The caret is moved to the line the server named.
    const selected = await page
      .getByRole('textbox', { name: /^Config YAML/ })
      .evaluate((el: any) => el.value.slice(el.selectionStart, el.selectionEnd));
    assert.equal(selected, 'launch:');
    await screenshot(page, 'variation-yaml-error');

    await page
      .getByRole('textbox', { name: /^Config YAML/ })
      .fill('lr: 0.1\nwarmup_steps: 500\nlaunch:\n  command: sleep 1\n');
    await page.getByRole('button', { name: 'Add variation' }).click();
    await page.getByRole('heading', { name: 'Variation 1' }).waitFor();
    const card = page.locator('section.variation');
    await card.getByText('"command": "sleep 1"').waitFor();
    assert.match(await card.locator('figure').nth(2).innerText(), /accelerate:\s*none/);
    await page.getByRole('button', { name: 'Commit' }).click();
    await page.locator('.page-title .badge', { hasText: 'committed' }).waitFor();
    await page.getByRole('button', { name: 'New run of variation 1' }).waitFor();
  });

  it('provisions a managed run and shows it succeed without a reload', async () => {
    const { page } = admin;
    await page.evaluate('window.stillTheSamePage = true');
    await page.getByRole('button', { name: 'New run of variation 1' }).click();
    const row = page.locator('tr[data-run="1.1"]');
    await row.getByText('pending').waitFor();
    await row.getByRole('button', { name: 'Provision run 1.1' }).click();
    await row.getByText('managed').waitFor();
    await screenshot(page, 'experiment-run-provisioned');
    await row.getByTestId('run-state').getByText('succeeded').waitFor({ timeout: 120_000 });
    assert.equal(await page.evaluate('window.stillTheSamePage'), true);
    assert.equal(await row.getByRole('link', { name: 'Temporal UI' }).getAttribute('target'), '_blank');
    await screenshot(page, 'experiment-detail');

    await row.getByRole('link', { name: '1.1' }).click();
    await page.getByRole('heading', { name: 'Run 1.1' }).waitFor();
    const timeline = page.locator('ol.timeline');
    assert.equal(await timeline.locator('li.done').count(), 5, await timeline.innerText());
    await page.getByRole('heading', { name: 'Environment snapshot' }).waitFor();
    await screenshot(page, 'run-detail');
  });

  it('retracts only with a reason, asked for in a dialog', async () => {
    const { page } = admin;
    await page.goto(experimentUrl);
    await page.getByRole('button', { name: 'Retract…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Retract this experiment' });
    await dialog.waitFor();
    assert.equal(await dialog.getByRole('button', { name: 'Retract' }).isDisabled(), true);
    await dialog.getByLabel('Reason').fill('the warmup was mis-specified');
    await dialog.getByRole('button', { name: 'Retract' }).click();
    await page.locator('.page-title .badge', { hasText: 'retracted' }).waitFor();
    await page.getByText('the warmup was mis-specified').waitFor();
  });

  it('shows server text as text: an experiment named like markup opens no dialog', async () => {
    const { page } = admin;
    const probe = '<img src=x onerror=alert(1)>';
    await page.getByRole('link', { name: 'Experiments', exact: true }).click();
    await createExperiment(page, probe, '<script>alert(2)</script>');
    assert.equal(await page.getByRole('heading', { level: 1 }).innerText(), probe);
    await page.getByText('<script>alert(2)</script>').waitFor();
    await page.getByRole('link', { name: '← Experiments' }).click();
    await page.getByRole('link', { name: probe }).waitFor();
    assert.equal(await page.locator('main img').count(), 0);
    await page.waitForTimeout(500);
    assert.deepEqual(dialogs, []);
    // Newest first, with run counts by state.
    const rows = page.locator('table.experiments tbody tr');
    assert.match(await rows.nth(0).innerText(), /<img src=x onerror=alert\(1\)>/);
    assert.match(await rows.nth(1).innerText(), /Warmup matters[\s\S]*retracted[\s\S]*0 \/ 0 \/ 1 \/ 0/);
    await screenshot(page, 'experiments-list');
  });

  it('filters by state and by text', async () => {
    const { page } = admin;
    await page.getByLabel('State').selectOption('retracted');
    // Polled from here, not by waitForFunction: its polling evaluates code, which the page's CSP forbids.
    const rows = page.locator('table.experiments tbody tr');
    await eventually(async () => (await rows.count()) === 1, 10_000, 'one retracted experiment listed');
    assert.match(await rows.innerText(), /Warmup matters/);
    await page.getByLabel('State').selectOption('');
    await page.getByLabel('Search name, description, hypothesis').fill('no such words');
    await page.getByText('No experiment matches these filters.').waitFor();
    await page.getByLabel('Search name, description, hypothesis').fill('');
  });

  it('works at 390 px wide and by keyboard', async () => {
    const phone = await newSession(PHONE);
    await signIn(phone.page, server.bootstrapKey!);
    const width = await phone.page.evaluate<number>('document.documentElement.scrollWidth');
    assert.ok(width <= PHONE.width, `the page scrolls sideways: ${width}px`);
    await screenshot(phone.page, 'experiments-list-390');
    await phone.page.goto(experimentUrl);
    await phone.page.getByRole('heading', { name: 'Runs' }).waitFor();
    await screenshot(phone.page, 'experiment-detail-390');
    // Tab reaches the skip link first, then the header's controls, each with a visible focus ring.
    await phone.page.keyboard.press('Tab');
    assert.equal(await phone.page.evaluate('document.activeElement.textContent'), 'Skip to content');
    const outline = await phone.page.evaluate('getComputedStyle(document.activeElement).outlineStyle');
    assert.equal(outline, 'solid');
    await phone.context.close();
  });

  it('shows a second user none of the first user’s experiments', async () => {
    const grace = await newSession();
    await signIn(grace.page, other.key);
    await grace.page.getByTestId('current-user').getByText(other.email).waitFor();
    await grace.page.getByText('No experiments in this scope yet').waitFor();
    await screenshot(grace.page, 'second-user-empty');
    await grace.page.goto(experimentUrl);
    await grace.page.getByRole('alert').getByText('not_found').waitFor();
    await screenshot(grace.page, 'second-user-not-found');

    // A revoked key ends the session: back to sign-in, saying why.
    const revoked = await fetch(`${server.url}/api-keys/${other.keyId}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${other.key}` },
    });
    assert.equal(revoked.status, 200);
    await grace.page.getByRole('link', { name: 'Experiments', exact: true }).click();
    await grace.page.getByRole('heading', { name: 'Sign in to Assay' }).waitFor();
    await grace.page.getByText('The server ended the session').waitFor();
    assert.deepEqual(await grace.page.evaluate('Object.keys(sessionStorage)'), []);
    await grace.context.close();
  });

  it('signs out, and never put a credential in a URL', async () => {
    const { page } = admin;
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in to Assay' }).waitFor();
    assert.deepEqual(await page.evaluate('Object.keys(sessionStorage)'), []);
    const leaked = seenUrls.filter((u) => u.includes(server.bootstrapKey!) || u.includes(other.key));
    assert.deepEqual(leaked, []);
  });
});

describe('web UI bundle', () => {
  const webDir = path.join(repoRoot, 'dist/web');
  type Chunk = { file: string; imports?: string[] };
  const readManifest = async () =>
    JSON.parse(await readFile(path.join(webDir, '.vite/manifest.json'), 'utf8')) as Record<string, Chunk>;
  /** The JS files of a chunk and its static imports (what loads before it runs), each once. */
  const closure = (manifest: Record<string, Chunk>, keys: string[]) => {
    const files = new Set<string>();
    const visit = (key: string) => {
      const chunk = manifest[key]!;
      if (files.has(chunk.file)) return;
      files.add(chunk.file);
      for (const imported of chunk.imports ?? []) visit(imported);
    };
    keys.forEach(visit);
    return [...files];
  };

  it('loads at most 150 KB of gzipped JavaScript before the compare page first renders', async (t) => {
    const index = await readFile(path.join(webDir, 'index.html'), 'utf8');
    const manifest = await readManifest();
    // index.html loads the entry; src/web/ui/main.tsx loads the opened page's chunk before the first render.
    const entry = closure(manifest, ['index.html']);
    assert.deepEqual(
      [...index.matchAll(/<script[^>]*\ssrc="\/ui\/([^"]+)"/g)].map((m) => m[1]!),
      [manifest['index.html']!.file],
    );
    const files = closure(manifest, ['index.html', 'ui/pages/compare-page.tsx']);
    let gzipped = 0;
    for (const file of files) gzipped += gzipSync(await readFile(path.join(webDir, file))).length;
    t.diagnostic(
      `initial JavaScript: ${(gzipped / 1024).toFixed(1)} KB gzipped (${files.join(', ')}; entry ${entry.join(', ')})`,
    );
    assert.ok(gzipped <= 150 * 1024, `${gzipped} bytes`);
    // The charts' library comes with the first chart, not before the page renders.
    assert.ok(!files.some((f) => f.includes('metric-chart')), files.join(', '));
  });

  it("carries no TypeBox: the UI reads the contract's values from its schema-free entries", async () => {
    const manifest = await readManifest();
    for (const { file } of Object.values(manifest).filter((c) => c.file.endsWith('.js'))) {
      // TypeBox marks every schema with this key; a bundle holding schemas holds it.
      const text = await readFile(path.join(webDir, file), 'utf8');
      assert.ok(!text.includes("'~kind'") && !text.includes('"~kind"'), `${file} holds TypeBox schemas`);
    }
  });
});
