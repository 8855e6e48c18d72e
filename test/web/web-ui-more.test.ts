import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startAssayServer, type AssayServer } from '../support/assay-server.ts';
import { launchChromium, screenshot } from '../support/browser.ts';
import { api, createUser, newSession, PHONE, signIn } from './support.ts';

// Search, API keys and organizations in a real browser (Debian's Chromium) against a real `assay server` on
// the embedded default.

describe('web UI in Chromium: search, API keys, organizations', () => {
  let dataDir: string;
  let server: AssayServer;
  let adminKey: string;
  let browser: Browser;
  let admin: { context: BrowserContext; page: Page };
  let member: Awaited<ReturnType<typeof createUser>>;
  const dialogs: string[] = [];

  before(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'assay-web-more-'));
    server = await startAssayServer({ ASSAY_DATA_DIR: dataDir });
    adminKey = server.bootstrapKey!;
    member = await createUser(server, adminKey, 'hedy@example.test');
    browser = await launchChromium();
    admin = await newSession(browser, dialogs);
    await admin.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
    await signIn(admin.page, server, adminKey);
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('finds a report with the match in <mark>, and its markup shown as text', async () => {
    const { page } = admin;
    const name = '<img src=x onerror=alert(3)> calibration notes';
    // Postgres's text parser drops what it reads as tags (<script>, </script>) from a snippet but passes
    // on the rest unescaped: this <img …> reaches the browser as it is in the document.
    const text =
      'The zeppelin calibration <img src=x onerror=alert(2)> held <script>alert(1)</script> steady.';
    const uploaded = await api(server, adminKey, 'POST', '/assets', {
      kind: 'report',
      name,
      content: text,
      content_type: 'text/plain',
    });
    assert.equal(uploaded.status, 201, JSON.stringify(uploaded.body));

    await page.getByRole('link', { name: 'Search', exact: true }).click();
    await page.getByRole('heading', { name: 'Search', exact: true }).waitFor();
    await page.getByText('Type a query and press Search').waitFor();
    await page.getByText('assay search "learning rate"').waitFor();
    const box = page.getByLabel('Search reports, documents and papers');
    assert.match((await page.locator('#search-syntax').innerText()) ?? '', /matches the phrase/);

    await box.fill('zeppelin');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    const result = page.locator('.search-results li');
    await result.first().waitFor();
    assert.equal(await result.count(), 1);
    assert.equal(await result.getByRole('heading').innerText(), name);
    const marks = result.locator('.snippet mark');
    assert.deepEqual(await marks.allInnerTexts(), ['zeppelin']);
    const snippet = await result.locator('.snippet').innerText();
    assert.match(snippet, /calibration <img src=x onerror=alert\(2\)> held\s+alert\(1\)\s+steady/);
    assert.equal(await page.locator('main script, main img').count(), 0);
    await screenshot(page, 'search-results');

    // Websearch syntax: an exclusion leaves nothing, and the kind filter narrows.
    await box.fill('zeppelin -calibration');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.getByText('Nothing in this scope matches').waitFor();
    await box.fill('"zeppelin calibration"');
    await page.getByLabel('Kind').selectOption('paper');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.getByText('Nothing in this scope matches').waitFor();
    await page.getByLabel('Kind').selectOption('report');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await result.first().waitFor();
    assert.deepEqual(await result.locator('.snippet mark').allInnerTexts(), ['zeppelin', 'calibration']);
    await page.waitForTimeout(300);
    assert.deepEqual(dialogs, []);
  });

  it('shows a minted key once, with a copy button, and revokes it', async () => {
    const { page } = admin;
    await page.getByRole('link', { name: 'API keys', exact: true }).click();
    await page.getByRole('heading', { name: 'API keys', exact: true }).waitFor();
    await page.locator('table.api-keys').getByText('this session').waitFor();
    await page.getByLabel('Description').fill('notebook key');
    await page.getByRole('checkbox', { name: 'experiments:write' }).check();
    await page.getByLabel('Expires after').selectOption('30');
    await page.getByRole('button', { name: 'Mint key' }).click();

    const shown = page.getByLabel('Your new API key');
    await shown.waitFor();
    const key = await shown.inputValue();
    assert.ok(key.length > 20, key);
    await page.getByRole('button', { name: 'Copy key' }).click();
    await page.getByText('Copied.').waitFor();
    assert.equal(await page.evaluate('navigator.clipboard.readText()'), key);
    await screenshot(page, 'api-key-minted');

    const me = await api(server, key, 'GET', '/v1/me');
    assert.equal(me.status, 200);
    assert.deepEqual([...me.body.auth.scopes].sort(), [
      'assets:read',
      'experiments:read',
      'experiments:write',
      'runs:read',
      'search:read',
    ]);
    const row = page.locator('table.api-keys tbody tr', { hasText: 'notebook key' });
    await row.getByText('active').waitFor();
    const expires = Date.parse(
      (await api(server, adminKey, 'GET', '/api-keys')).body.items.find(
        (k: { description: string }) => k.description === 'notebook key',
      ).expires_at,
    );
    assert.ok(Math.abs(expires - Date.now() - 30 * 86_400_000) < 3_600_000, new Date(expires).toISOString());

    // Never again: away and back, the key is nowhere on the page.
    await page.getByRole('link', { name: 'Experiments', exact: true }).click();
    await page.getByRole('heading', { name: 'Experiments', exact: true }).waitFor();
    await page.getByRole('link', { name: 'API keys', exact: true }).click();
    await row.waitFor();
    assert.equal(await page.getByLabel('Your new API key').count(), 0);
    assert.ok(!(await page.content()).includes(key), 'the minted key is still in the page');

    await page.getByRole('button', { name: 'Revoke key notebook key' }).click();
    const dialog = page.getByRole('dialog', { name: 'Revoke this key' });
    await dialog.waitFor();
    await dialog.getByRole('button', { name: 'Revoke' }).click();
    await row.getByText('revoked').waitFor();
    assert.equal(await row.getByRole('button', { name: /Revoke/ }).count(), 0);
    assert.equal((await api(server, key, 'GET', '/v1/me')).status, 401);
    await screenshot(page, 'api-keys');
    assert.deepEqual(dialogs, []);
  });

  it('creates an organization and adds a member by email', async () => {
    const { page } = admin;
    await page.getByRole('link', { name: 'Organizations', exact: true }).click();
    await page.getByRole('heading', { name: 'Organizations', exact: true }).waitFor();
    await page.getByText('You belong to no organization yet').waitFor();
    await screenshot(page, 'organizations-empty');
    await page.getByLabel('Name').fill('Vision Lab');
    await page.getByLabel('Slug').fill('vision-lab');
    await page.getByRole('button', { name: 'Create organization' }).click();
    await page.getByRole('heading', { name: 'Vision Lab' }).waitFor();
    const rows = page.locator('table.members tbody tr');
    await rows.first().waitFor();
    assert.equal(await rows.count(), 1);
    assert.match(await rows.first().innerText(), /owner/);
    // The header's scope menu offers it at once.
    await page
      .getByRole('combobox', { name: 'Scope' })
      .getByText('Vision Lab (vision-lab)')
      .waitFor({ state: 'attached' });

    await page.getByLabel('Email').fill('nobody@example.test');
    await page.getByRole('button', { name: 'Add member' }).click();
    // An unknown address is answered like a registered one (no account enumeration), and adds no one.
    await page.getByRole('status').getByText('If nobody@example.test has an Assay account').waitFor();
    assert.equal(await rows.count(), 1);
    await page.getByLabel('Email').fill(member.email);
    await page.getByRole('button', { name: 'Add member' }).click();
    await page.locator('table.members tbody tr', { hasText: member.email }).getByText('member').waitFor();
    assert.equal(await rows.count(), 2);
    await screenshot(page, 'organization-members');

    const theirs = await api(server, member.key, 'GET', '/v1/me/scopes');
    assert.deepEqual(
      theirs.body.organizations.map((o: { slug: string; role: string }) => [o.slug, o.role]),
      [['vision-lab', 'member']],
    );

    // A taken slug is refused with the server's code, and the list shows the new organization.
    await page.getByRole('link', { name: '← Organizations' }).click();
    await page.getByRole('link', { name: 'Vision Lab' }).waitFor();
    await page.getByLabel('Name').fill('Vision Lab again');
    await page.getByLabel('Slug').fill('vision-lab');
    await page.getByRole('button', { name: 'Create organization' }).click();
    await page.getByRole('alert').getByText('slug_taken').waitFor();
    await screenshot(page, 'organizations');
  });

  it('fits the new pages in 390 px', async () => {
    const phone = await newSession(browser, dialogs, PHONE);
    await signIn(phone.page, server, adminKey);
    for (const [link, heading] of [
      ['Search', 'Search'],
      ['API keys', 'API keys'],
      ['Organizations', 'Organizations'],
    ] as const) {
      await phone.page.getByRole('link', { name: link, exact: true }).click();
      await phone.page.getByRole('heading', { name: heading, exact: true }).waitFor();
      const width = await phone.page.evaluate<number>('document.documentElement.scrollWidth');
      assert.ok(width <= PHONE.width, `${link} scrolls sideways: ${width}px`);
    }
    await screenshot(phone.page, 'organizations-390');
    await phone.context.close();
  });
});
