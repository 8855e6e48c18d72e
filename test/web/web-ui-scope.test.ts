import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { startAssayServer, type AssayServer } from '../support/assay-server.ts';
import { launchChromium, screenshot } from '../support/browser.ts';
import { api, DESKTOP, newSession, PHONE, signIn } from './support.ts';

// Issue #25, friction 5, in a real browser (Debian's Chromium) against a real `assay server`: the experiments
// list and the search page say which scope they answered from, and an empty search names the other scopes
// that hold matches, with a button that switches to each.

describe('web UI in Chromium: the scope of lists and searches', () => {
  let dataDir: string;
  let server: AssayServer;
  let key: string;
  let browser: Browser;
  let lab: { id: string };
  const dialogs: string[] = [];

  before(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'assay-web-scope-'));
    server = await startAssayServer({ ASSAY_DATA_DIR: dataDir });
    key = server.bootstrapKey!;
    const created = await api(server, key, 'POST', '/organizations', { slug: 'ml-lab', name: 'ML Lab' });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    lab = created.body;
    for (const name of ['warmup schedules', 'warmup ablation'])
      assert.equal(
        (
          await api(server, key, 'POST', '/assets', {
            kind: 'report',
            name,
            content: `${name}: linear warmup lowers the final loss`,
            organization_id: lab.id,
          })
        ).status,
        201,
      );
    for (const [name, organization_id] of [
      ['lab experiment', lab.id],
      ['my experiment', 'personal'],
    ])
      assert.equal((await api(server, key, 'POST', '/experiments', { name, organization_id })).status, 201);
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  const scopeNote = (page: Page) => page.locator('main .scope-note');

  for (const [viewport, suffix] of [
    [DESKTOP, '1280'],
    [PHONE, '390'],
  ] as const) {
    it(`at ${suffix} px: the experiments list says its scope; an empty search names the scope with matches and switches to it`, async () => {
      const { context, page } = await newSession(browser, dialogs, viewport);
      try {
        await signIn(page, server, key);
        await scopeNote(page).waitFor();
        assert.equal(await scopeNote(page).innerText(), 'Experiments in your personal scope');
        assert.match(await page.locator('table.experiments').innerText(), /my experiment/);
        assert.doesNotMatch(await page.locator('table.experiments').innerText(), /lab experiment/);
        await screenshot(page, `scope-experiments-personal-${suffix}`);

        await page.getByLabel('Scope').selectOption(lab.id);
        await page.locator(`main .scope-note[data-scope="${lab.id}"]`).waitFor();
        assert.equal(await scopeNote(page).innerText(), 'Experiments in organization ML Lab (ml-lab)');
        await page.locator('table.experiments').getByText('lab experiment').waitFor();
        await screenshot(page, `scope-experiments-lab-${suffix}`);
        // The assets list is not narrowed by the scope, and says so; its experiment filter is.
        await page.getByRole('link', { name: 'Assets', exact: true }).click();
        await page.locator('main .scope-note', { hasText: 'ML Lab' }).waitFor();
        assert.equal(
          await scopeNote(page).innerText(),
          'Assets in every scope you can see; the experiment filter offers the experiments of organization ML Lab (ml-lab)',
        );
        await page.getByLabel('Scope').selectOption('personal');
        await page.locator('main .scope-note', { hasText: 'your personal scope' }).waitFor();
        await page.getByRole('link', { name: 'Experiments', exact: true }).click();
        await page.locator('main .scope-note[data-scope="personal"]').waitFor();

        await page.getByRole('link', { name: 'Search', exact: true }).click();
        await page.getByLabel('Search reports, documents and papers').fill('warmup');
        await page.getByRole('button', { name: 'Search', exact: true }).click();
        const empty = page.locator('main .empty-state');
        await empty.getByText('Nothing in this scope matches “warmup”.').waitFor();
        assert.equal(await scopeNote(page).innerText(), '0 results in your personal scope');
        const hint = page.getByRole('group', { name: 'Matches in other scopes' });
        assert.equal(
          (await hint.innerText()).replace(/\s+/g, ' ').trim(),
          '2 matches in organization ML Lab (ml-lab) Search ML Lab',
        );
        await empty.getByText("assay search 'warmup' --organization ml-lab").waitFor();
        await screenshot(page, `scope-search-empty-${suffix}`);

        await hint.getByRole('button', { name: 'Search ML Lab' }).click();
        await page.locator('.search-results li').first().waitFor();
        assert.equal(await page.locator('.search-results li').count(), 2);
        assert.equal(await scopeNote(page).innerText(), '2 results in organization ML Lab (ml-lab)');
        assert.equal(await page.getByLabel('Scope').inputValue(), lab.id, 'the header switched too');
        await screenshot(page, `scope-search-switched-${suffix}`);

        // Nothing anywhere: no hint.
        await page.getByLabel('Search reports, documents and papers').fill('zeppelin');
        await page.getByRole('button', { name: 'Search', exact: true }).click();
        await empty.getByText('Nothing in this scope matches “zeppelin”.').waitFor();
        assert.equal(await scopeNote(page).innerText(), '0 results in organization ML Lab (ml-lab)');
        assert.equal(await page.getByRole('group', { name: 'Matches in other scopes' }).count(), 0);
        await page.getByLabel('Scope').selectOption('personal');
        assert.deepEqual(dialogs, []);
      } finally {
        await context.close();
      }
    });
  }
});
