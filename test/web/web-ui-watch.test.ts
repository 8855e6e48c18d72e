import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { stringify } from 'yaml';
import { mintEmbeddedOrchestratorKey } from '../../src/server/orchestration/orchestrator-keys.ts';
import { launchChromium, screenshot } from '../support/browser.ts';
import { FakeOrchestrator } from '../support/fake-orchestrator.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { eventually } from '../support/bounded-waits.ts';
import { workerKeyThroughExchange } from '../support/worker-key-exchange.ts';
import { newSession, PHONE, signIn } from './support.ts';

// Watching a run in a real browser (Debian's Chromium) against the real service on PGlite: the run page's live
// console log (ANSI styles as text styles, markup shown as text, search, follow, download), its System
// section, its name, tags and notes (markdown rendered as elements only) and archive switch, the runs table's
// filters, the experiments list's tags, deleting a draft, the run's config, the compare page's legends and
// sticky run column, and a managed run's instance once the run has ended. Everything is set up through the
// HTTP API, as the CLI and a runner would.

const ESC = '\x1b';

describe('web UI in Chromium: watching a run', () => {
  let t: TestService;
  let browser: Browser;
  let user: { key: string };
  let orchestratorKey: string;
  let session: { context: BrowserContext; page: Page };
  const dialogs: string[] = [];
  const problems: string[] = [];
  let experimentId = '';
  let seq = 0;

  const api = () => t.as(user.key);
  async function must(method: 'get' | 'post' | 'patch' | 'put' | 'delete', url: string, body?: unknown) {
    const res = await api()[method](url, body);
    assert.ok(
      res.status >= 200 && res.status < 300,
      `${method} ${url}: ${res.status} ${JSON.stringify(res.body)}`,
    );
    return res.body;
  }
  const runUrl = (n: number, r: number) => `/experiments/${experimentId}/variations/${n}/runs/${r}`;
  async function startRun(n: number, body?: unknown): Promise<number> {
    const run = await must('post', `/experiments/${experimentId}/variations/${n}/runs`, body);
    await must('get', `${runUrl(n, run.r)}/config`);
    await must('post', `${runUrl(n, run.r)}/start`, { environment: { os: 'linux' } });
    return run.r as number;
  }
  /** Appends lines to a run's log as `assay run` does: numbered chunks. */
  async function print(n: number, r: number, lines: Array<[stream: 'stdout' | 'stderr', text: string]>) {
    const first = seq + 1;
    seq += lines.length;
    await must('post', `${runUrl(n, r)}/logs`, {
      first_seq: first,
      lines: lines.map(([stream, text]) => ({ stream, time: new Date().toISOString(), text })),
    });
  }

  before(async () => {
    // A 1 MiB log cap (the least), so that a test run's log overflows it.
    t = await startTestService({
      pglite: true,
      listen: true,
      orchestrator: new FakeOrchestrator(),
      env: { ASSAY_RUN_LOG_MAX_MB: '1' },
    });
    orchestratorKey = (await mintEmbeddedOrchestratorKey(t.service.db)).token;
    user = await t.createUser();
    browser = await launchChromium();
    session = await newSession(browser, dialogs);
    session.page.on('console', (m) => {
      if (m.location().url.endsWith('/favicon.ico')) return;
      if (m.type() === 'error' || /Content Security Policy/i.test(m.text()))
        problems.push(`${m.text()} (${m.location().url})`);
    });
    session.page.on('pageerror', (e) => problems.push(e.message));
    await signIn(session.page, t as never, user.key);

    const experiment = await must('post', '/experiments', {
      name: 'Depth and learning rate',
      organization_id: 'personal',
      tags: ['vision'],
    });
    experimentId = experiment.id;
    for (const [name, lr, depth] of [
      ['shallow', 0.01, 3],
      ['deep', 0.1, 6],
    ] as const)
      await must('post', `/experiments/${experimentId}/variations`, {
        name,
        config_yaml: stringify({ lr, model: { depth }, epochs: 2 }),
      });
    await must('post', `/experiments/${experimentId}/commit`);
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  it('shows the log live: ANSI styles as styles, markup as text, stderr marked, new lines within 2 s', async () => {
    const { page } = session;
    const r = await startRun(1);
    await print(1, r, [
      ['stdout', 'starting training'],
      [
        'stdout',
        `${ESC}[1;31mbold red${ESC}[0m then ${ESC}[4munderlined${ESC}[24m and ${ESC}[38;5;208morange${ESC}[39m`,
      ],
      ['stderr', 'warning: <script>alert("x")</script> <img src=x onerror=alert(1)>'],
      ['stdout', `${ESC}[2K${ESC}[1Gprogress 100%${ESC}]0;title\x07`],
      ...Array.from({ length: 60 }, (_, i): ['stdout', string] => [
        'stdout',
        `epoch 1 step ${i} loss ${(1 / (i + 1)).toFixed(3)}`,
      ]),
    ]);
    await page.goto(`${t.url}/ui${runUrl(1, r)}`);
    const pane = page.locator('section.log-pane');
    const lines = pane.locator('.log-lines');
    await lines.locator('[data-seq="64"]').waitFor();
    // Follow shows the newest line: the box is scrolled to its bottom.
    assert.equal(await pane.getByLabel('Follow').isChecked(), true);
    const atBottom = () =>
      lines.evaluate(
        (el: { scrollTop: number; clientHeight: number; scrollHeight: number }) =>
          el.scrollTop + el.clientHeight >= el.scrollHeight - 2,
      );
    assert.equal(await atBottom(), true);

    // Colours, bold and underline are styles of spans; the other escapes are gone.
    await lines.evaluate((el: { scrollTop: number }) => (el.scrollTop = 0));
    const styled = lines.locator('[data-seq="2"]');
    await styled.waitFor();
    assert.equal(await styled.locator('.log-text').innerText(), 'bold red then underlined and orange');
    const red = styled.locator('.log-text > span', { hasText: 'bold red' });
    const style = (el: unknown, name: string) =>
      (globalThis as unknown as { getComputedStyle(e: unknown): Record<string, string> }).getComputedStyle(
        el,
      )[name];
    assert.equal(await red.evaluate(style, 'color'), 'rgb(192, 38, 45)');
    assert.equal(await red.evaluate(style, 'fontWeight'), '700');
    assert.match(
      await styled
        .locator('.log-text > span', { hasText: 'underlined' })
        .evaluate(style, 'textDecorationLine'),
      /underline/,
    );
    assert.equal(
      await styled.locator('.log-text > span', { hasText: 'orange' }).evaluate(style, 'color'),
      'rgb(255, 135, 0)',
    );
    assert.equal(await lines.locator('[data-seq="4"] .log-text').innerText(), 'progress 100%');
    await screenshot(page, 'run-log-top');

    // Markup in a line is text: no script or image element, the text as printed, marked as stderr.
    const stderr = lines.locator('[data-seq="3"]');
    assert.equal(await stderr.getAttribute('data-stream'), 'stderr');
    assert.equal(
      await stderr.locator('.log-text').innerText(),
      'warning: <script>alert("x")</script> <img src=x onerror=alert(1)>',
    );
    assert.equal(await pane.locator('script, img').count(), 0);
    assert.equal(await stderr.evaluate(style, 'backgroundColor'), 'rgb(255, 241, 240)');

    // Scrolling up stops following; ticking Follow scrolls to the newest line again.
    assert.equal(await pane.getByLabel('Follow').isChecked(), false);
    await pane.getByLabel('Follow').check();
    await eventually(atBottom, 5_000, 'the log scrolled to its newest line');

    // A chunk printed now shows within 2 s, scrolled into view.
    await page.waitForTimeout(500);
    const printed = Date.now();
    await print(1, r, [['stdout', 'validation loss 0.123']]);
    await lines.locator('[data-seq="65"]', { hasText: 'validation loss 0.123' }).waitFor({ timeout: 2_000 });
    const shownAfter = Date.now() - printed;
    assert.ok(await lines.locator('[data-seq="65"]').isVisible());
    await eventually(atBottom, 5_000, 'the log followed the new line');
    process.stdout.write(`# a printed line showed in the browser after ${shownAfter} ms\n`);
    await screenshot(page, 'run-log');
    assert.deepEqual(problems, []);
    assert.deepEqual(dialogs, []);
  });

  it('searches the log, downloads it whole, and says when the run has ended', async () => {
    const { page } = session;
    const pane = page.locator('section.log-pane');
    const lines = pane.locator('.log-lines');
    await pane.getByLabel('Search the log').fill('LOSS 0.0');
    await pane.getByText('matching lines').waitFor();
    const texts = await lines.locator('.log-row .log-text').allInnerTexts();
    assert.ok(texts.length > 3);
    assert.ok(
      texts.every((x) => /loss 0\.0/i.test(x)),
      texts.join('\n'),
    );
    assert.match(
      await pane.locator('[role=status]', { hasText: 'matching' }).innerText(),
      new RegExp(`^${texts.length} matching lines`),
    );
    assert.equal(await lines.locator('mark.log-match').first().innerText(), 'loss 0.0');
    await screenshot(page, 'run-log-search');
    await pane.getByLabel('Search the log').fill('');
    await lines.locator('[data-seq="65"]').waitFor();

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      pane.getByRole('link', { name: 'Download log' }).click(),
    ]);
    const run = page.url().split('/').pop();
    assert.equal(download.suggestedFilename(), `run-1.${run}.log`);
    const text = await readFile((await download.path())!, 'utf8');
    // A line per line: its time, stream and text as printed.
    assert.match(text, /^\S+ stdout \| starting training\n/);
    assert.match(text, /stderr \| warning: <script>/);
    assert.match(text, /<script>alert\("x"\)<\/script>/);
    assert.match(text, /validation loss 0\.123/);

    await must('post', `${runUrl(1, Number(run))}/succeed`);
    await pane.locator('.log-status', { hasText: 'complete' }).waitFor();
    assert.deepEqual(problems, []);
  });

  it('keeps a long log bounded: the newest 20,000 lines, only the rows in view rendered, and the cap’s gap', async () => {
    const { page } = session;
    const r = await startRun(2);
    seq = 0;
    for (let chunk = 0; chunk < 5; chunk++)
      await print(
        2,
        r,
        Array.from({ length: 5_000 }, (_, i): ['stdout', string] => [
          'stdout',
          `line ${chunk * 5_000 + i + 1}`,
        ]),
      );
    const opened = Date.now();
    await page.goto(`${t.url}/ui${runUrl(2, r)}`);
    const pane = page.locator('section.log-pane');
    const lines = pane.locator('.log-lines');
    await lines.locator('[data-seq="25000"]').waitFor({ timeout: 30_000 });
    process.stdout.write(
      `# 25,000 lines read and the last shown ${Date.now() - opened} ms after opening the page\n`,
    );
    await pane
      .getByText('Showing the last 20,000 lines: the 5,000 before them are in the download.')
      .waitFor();
    assert.equal(await lines.getAttribute('data-rows'), '20000');
    const rendered = await lines.locator('.log-row').count();
    assert.ok(rendered > 10 && rendered < 150, `${rendered} rows in the DOM`);
    await lines.evaluate((el: { scrollTop: number }) => (el.scrollTop = 0));
    await lines.locator('[data-seq="5001"]').waitFor();
    assert.equal(await lines.locator('[data-seq="5000"]').count(), 0);
    await must('post', `${runUrl(2, r)}/succeed`);

    // Past the 1 MiB cap the service keeps the head and the tail; the pane marks the gap between them.
    const capped = await startRun(2);
    seq = 0;
    const wide = 'x'.repeat(10_000);
    for (let chunk = 0; chunk < 20; chunk++)
      await print(
        2,
        capped,
        Array.from({ length: 10 }, (_, i): ['stdout', string] => [
          'stdout',
          `line ${chunk * 10 + i + 1} ${wide}`,
        ]),
      );
    await must('post', `${runUrl(2, capped)}/succeed`);
    const read = await must('get', `${runUrl(2, capped)}/logs?limit=1`);
    assert.ok(read.dropped.lines > 0, JSON.stringify(read.dropped));
    await page.goto(`${t.url}/ui${runUrl(2, capped)}`);
    const gap = lines.locator('.log-gap');
    await gap.waitFor();
    assert.equal(await gap.innerText(), `[… ${read.dropped.lines} lines dropped …]`);
    assert.equal(await gap.getAttribute('data-gap'), String(read.dropped.lines));
    await pane.getByText(`it dropped ${read.dropped.lines} lines`).waitFor();
    await pane.locator('.log-status', { hasText: 'complete' }).waitFor();
    await screenshot(page, 'run-log-gap');
    assert.deepEqual(problems, []);
  });

  it('charts system/… keys in their own section, apart from the training metrics', async () => {
    const { page } = session;
    const r = await startRun(2);
    const points = [
      ...['loss', 'accuracy'].flatMap((key) => [0, 1, 2].map((step) => ({ key, step, value: step / 3 }))),
      ...[
        'system/cpu_percent',
        'system/rss_mb',
        'system/gpu0/utilization_percent',
        'system/gpu0/memory_used_mb',
        'system/gpu0/power_w',
      ].flatMap((key) => [0, 1].map((step) => ({ key, step, value: 10 + step }))),
    ];
    await must('post', `${runUrl(2, r)}/metrics`, { metrics: points });
    await must('post', `${runUrl(2, r)}/succeed`);
    await page.goto(`${t.url}/ui${runUrl(2, r)}`);
    const system = page.locator('section.system-metrics');
    await system.getByRole('heading', { name: 'System' }).waitFor();
    const keysIn = (section: ReturnType<Page['locator']>) =>
      section.locator('figure.metric-chart').evaluateAll((els) => els.map((e) => e.getAttribute('data-key')));
    await system.locator('figure.metric-chart .chart[data-drawn-points="2"]').first().waitFor();
    assert.deepEqual(await keysIn(system), [
      'system/cpu_percent',
      'system/gpu0/memory_used_mb',
      'system/gpu0/power_w',
      'system/gpu0/utilization_percent',
      'system/rss_mb',
    ]);
    const training = page.locator('section[aria-labelledby="metrics-title"]');
    await training.locator('figure.metric-chart').first().waitFor();
    assert.deepEqual(await keysIn(training), ['accuracy', 'loss']);
    assert.deepEqual(problems, []);
  });

  it('shows the run’s variation and config, and edits its name, tags and notes (markdown as elements only)', async () => {
    const { page } = session;
    const r = await startRun(1);
    await page.goto(`${t.url}/ui${runUrl(1, r)}`);
    await page.locator('.variation-name', { hasText: 'Variation 1 · shallow' }).waitFor();
    const config = page.locator('details.config');
    assert.equal(await config.getAttribute('open'), '');
    assert.deepEqual(JSON.parse(await config.locator('pre').innerText()), {
      lr: 0.01,
      model: { depth: 3 },
      epochs: 2,
    });
    await config.locator('summary').click();
    assert.equal(await config.locator('pre').isVisible(), false);

    await page.getByRole('button', { name: 'Edit name, tags and notes' }).click();
    const form = page.getByRole('form', { name: "Edit the run's labels" });
    await form.getByLabel('Name').fill('baseline warmup');
    await form.getByLabel('Tags (comma-separated)').fill('baseline, warmup , baseline');
    await form
      .getByLabel('Notes (markdown)')
      .fill(
        '## Findings\n\nLoss is *lower* with **warmup**; see [the paper](https://arxiv.org/abs/1706.03762) and `lr=0.01`.\n\n- one\n- two\n\n<img src=x onerror=alert(1)> [click](javascript:alert(2))',
      );
    await form.locator('.notes h4', { hasText: 'Findings' }).waitFor();
    await form.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('heading', { name: `Run 1.${r} · baseline warmup` }).waitFor();
    assert.deepEqual(await page.getByRole('list', { name: 'Tags' }).locator('li').allInnerTexts(), [
      'baseline',
      'warmup',
    ]);
    const notes = page.getByTestId('run-notes');
    assert.equal(await notes.locator('h4').innerText(), 'Findings');
    assert.equal(await notes.locator('em').innerText(), 'lower');
    assert.equal(await notes.locator('strong').innerText(), 'warmup');
    assert.equal(await notes.locator('code').innerText(), 'lr=0.01');
    assert.equal(await notes.locator('li').count(), 2);
    const link = notes.getByRole('link', { name: 'the paper' });
    assert.equal(await link.getAttribute('href'), 'https://arxiv.org/abs/1706.03762');
    assert.equal(await link.getAttribute('rel'), 'noopener noreferrer nofollow');
    // The image tag is text, and the javascript: link is no link.
    assert.equal(await notes.locator('img').count(), 0);
    assert.match(await notes.innerText(), /<img src=x onerror=alert\(1\)> click$/);
    assert.equal(await notes.getByRole('link').count(), 1);
    const stored = await must('get', runUrl(1, r));
    assert.equal(stored.name, 'baseline warmup');
    assert.deepEqual(stored.tags, ['baseline', 'warmup']);
    assert.match(stored.notes, /^## Findings/);
    await screenshot(page, 'run-labels');
    assert.deepEqual(problems, []);
    assert.deepEqual(dialogs, []);
  });

  it('lists runs with their names and tags, filters them by tag and state, and hides archived ones', async () => {
    const { page } = session;
    const tagged = await startRun(2, { name: 'deep ablation', tags: ['ablation'] });
    await must('post', `${runUrl(2, tagged)}/fail`, { reason: 'crash', message: 'boom' });
    await page.goto(`${t.url}/ui/experiments/${experimentId}`);
    const table = page.locator('table.runs');
    const rows = (n: number) =>
      eventually(async () => (await table.locator('tbody tr').count()) === n, 10_000, `${n} runs listed`);
    const shownRuns = () =>
      table.locator('tbody tr').evaluateAll((els) => els.map((e) => e.getAttribute('data-run')));
    await table.locator(`tr[data-run="2.${tagged}"]`).waitFor();
    const row = table.locator(`tr[data-run="2.${tagged}"]`);
    assert.match(await row.innerText(), /deep ablation/);
    assert.deepEqual(await row.getByRole('list').locator('li').allInnerTexts(), ['ablation']);
    const all = await shownRuns();
    assert.ok(all.length >= 4, all.join());

    const filters = page.getByRole('search', { name: 'Filter runs' });
    await filters.getByLabel('Tags (comma-separated; a run has every one)').fill('ablation');
    await rows(1);
    assert.deepEqual(await shownRuns(), [`2.${tagged}`]);
    await filters
      .getByLabel('Tags (comma-separated; a run has every one)')
      .fill('ablation, nothing-has-this');
    await page.getByText('No run matches these filters.').waitFor();
    await filters.getByLabel('Tags (comma-separated; a run has every one)').fill('');
    await filters.getByLabel('State').selectOption('failed');
    await table.locator(`tr[data-run="2.${tagged}"]`).waitFor();
    await rows(1);
    await filters.getByLabel('State').selectOption('');
    await rows(all.length);

    // Archive from the run's page: it leaves the table, and comes back with "Archived runs too".
    await table.locator(`tr[data-run="2.${tagged}"] a`).first().click();
    await page.getByRole('button', { name: 'Archive' }).click();
    await page.getByRole('button', { name: 'Unarchive' }).waitFor();
    await page.locator('.badge.archived').first().waitFor();
    await page.getByRole('link', { name: '← Experiment' }).click();
    await table.locator('tbody tr').first().waitFor();
    await rows(all.length - 1);
    assert.equal(await table.locator(`tr[data-run="2.${tagged}"]`).count(), 0);
    await filters.getByLabel('Archived runs too').check();
    await table.locator(`tr[data-run="2.${tagged}"] .badge.archived`).waitFor();
    assert.deepEqual(problems, []);
  });

  it('shows experiment tags in the list and filters by them; deletes a draft once confirmed', async () => {
    const { page } = session;
    const draft = await must('post', '/experiments', {
      name: 'Scratch draft',
      organization_id: 'personal',
      tags: ['scratch'],
    });
    await page.goto(`${t.url}/ui/`);
    const list = page.locator('table.experiments');
    await list.getByRole('link', { name: 'Scratch draft' }).waitFor();
    assert.deepEqual(
      await list.getByRole('list', { name: 'Tags of Depth and learning rate' }).locator('li').allInnerTexts(),
      ['vision'],
    );
    await page.locator('form.filters').getByLabel('Tags', { exact: true }).fill('vision');
    await list.getByRole('link', { name: 'Scratch draft' }).waitFor({ state: 'detached' });
    assert.deepEqual(await list.locator('tbody tr a').allInnerTexts(), ['Depth and learning rate']);
    await page.locator('form.filters').getByLabel('Tags', { exact: true }).fill('');

    await list.getByRole('link', { name: 'Scratch draft' }).click();
    await page.getByRole('heading', { name: 'Scratch draft' }).waitFor();
    await page.getByRole('button', { name: 'Delete draft…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete this draft?' });
    await dialog.getByRole('button', { name: 'Keep it' }).click();
    await dialog.waitFor({ state: 'hidden' });
    assert.equal((await api().get(`/experiments/${draft.id}`)).status, 200);
    await page.getByRole('button', { name: 'Delete draft…' }).click();
    await dialog.getByRole('button', { name: 'Delete draft' }).click();
    await page.getByRole('heading', { name: 'Experiments', exact: true }).waitFor();
    await list.getByRole('link', { name: 'Scratch draft' }).waitFor({ state: 'detached' });
    assert.equal((await api().get(`/experiments/${draft.id}`)).status, 404);
    await page.goto(`${t.url}/ui/experiments/${experimentId}`);
    await page.getByRole('heading', { name: 'Depth and learning rate' }).waitFor();
    // A committed experiment offers no delete.
    assert.equal(await page.getByRole('button', { name: 'Delete draft…' }).count(), 0);
    // Its tags change in any state.
    await page.getByRole('button', { name: 'Edit tags' }).click();
    await page
      .getByRole('form', { name: "Edit the experiment's tags" })
      .getByLabel('Tags (comma-separated)')
      .fill('vision, cnn');
    await page.getByRole('button', { name: 'Save tags' }).click();
    await page.getByRole('list', { name: 'Tags' }).getByText('cnn').waitFor();
    assert.deepEqual((await must('get', `/experiments/${experimentId}`)).tags, ['vision', 'cnn']);
    assert.deepEqual(problems, []);
    assert.deepEqual(dialogs, []);
  });

  it('compares by config: legends name the differing values, the run column stays in view', async () => {
    const { page } = session;
    for (const n of [1, 2]) {
      const r = await startRun(n);
      await must('post', `${runUrl(n, r)}/metrics`, {
        metrics: [
          { key: 'system/cpu_percent', step: 0, value: 50 },
          ...[0, 1, 2].map((step) => ({ key: 'val_loss', step, value: n / (step + 1) })),
        ],
      });
      await must('post', `${runUrl(n, r)}/succeed`);
    }
    await page.goto(`${t.url}/ui/experiments/${experimentId}/compare`);
    const overlay = page.locator('figure.compare-overlay');
    // The default curve is the first training key (accuracy, logged by run 2.1), never system/cpu_percent.
    assert.equal(await page.getByRole('combobox', { name: 'Metric' }).inputValue(), 'accuracy');
    await page.getByRole('combobox', { name: 'Metric' }).selectOption('val_loss');
    await overlay.locator('.chart[data-drawn-lines="2"]').waitFor();
    assert.deepEqual(await overlay.locator('.u-legend .u-series .u-label').allInnerTexts(), [
      'lr=0.01, model.depth=3',
      'lr=0.1, model.depth=6',
    ]);
    // Default table columns are training keys: system ones only when picked.
    await page.getByRole('columnheader', { name: 'metric val_loss (last)' }).waitFor();
    assert.equal(
      await page.getByRole('columnheader', { name: 'metric system/cpu_percent (last)' }).count(),
      0,
    );
    await screenshot(page, 'compare-legends');

    const phone = await newSession(browser, dialogs, PHONE);
    await signIn(phone.page, t as never, user.key);
    await phone.page.goto(`${t.url}/ui/experiments/${experimentId}/compare`);
    const scroller = phone.page.locator('.table-scroll', { has: phone.page.locator('table.compare') });
    const firstCell = phone.page.locator('table.compare tbody tr td:first-child').first();
    await firstCell.waitFor();
    assert.equal(
      await firstCell.evaluate(
        (el) =>
          (globalThis as unknown as { getComputedStyle(e: unknown): { position: string } }).getComputedStyle(
            el,
          ).position,
      ),
      'sticky',
    );
    const before = (await firstCell.boundingBox())!.x;
    const scrolled = await scroller.evaluate(
      (el: { scrollLeft: number; scrollWidth: number; clientWidth: number }) => {
        el.scrollLeft = el.scrollWidth;
        return el.scrollLeft;
      },
    );
    assert.ok(scrolled > 100, `the table scrolls sideways by ${scrolled}px`);
    const afterScroll = (await firstCell.boundingBox())!;
    assert.ok(Math.abs(afterScroll.x - before) < 1, `the run cell moved from ${before} to ${afterScroll.x}`);
    assert.ok(afterScroll.x >= 0 && afterScroll.x + afterScroll.width <= PHONE.width);
    await screenshot(phone.page, 'compare-legends-390');
    await phone.context.close();
    assert.deepEqual(problems, []);
  });

  it('charts a sweep run’s objective first, and makes it the compare page’s default curve', async () => {
    const { page } = session;
    const experiment = await must('post', '/experiments', {
      name: 'Objective sweep',
      organization_id: 'personal',
    });
    const created = await api().post(`/experiments/${experiment.id}/sweeps`, {
      base_yaml: 'lr: 0.1\nlaunch:\n  command: python train.py\n',
      list: [{ lr: 0.1 }, { lr: 0.01 }],
      objective: { metric: 'val_loss', goal: 'minimize' },
    });
    assert.equal(created.status, 202, JSON.stringify(created.body));
    const runs = created.body.runs as Array<{ id: string; n: number; r: number }>;
    for (const run of runs) {
      const path = `/experiments/${experiment.id}/variations/${run.n}/runs/${run.r}`;
      const worker = t.as((await workerKeyThroughExchange(t, orchestratorKey, run.id)).key);
      assert.equal((await worker.get(`${path}/config`)).status, 200);
      assert.equal((await worker.post(`${path}/start`, { environment: {} })).status, 200);
      const metrics = ['accuracy', 'loss', 'system/cpu_percent', 'val_loss'].map((key) => ({
        key,
        step: 0,
        value: run.n,
      }));
      assert.equal((await worker.post(`${path}/metrics`, { metrics })).status, 200);
    }
    const first = runs[0]!;
    await page.goto(`${t.url}/ui/experiments/${experiment.id}/variations/${first.n}/runs/${first.r}`);
    const training = page.locator('section[aria-labelledby="metrics-title"]');
    await training.locator('figure.metric-chart').nth(2).waitFor();
    assert.deepEqual(
      await training
        .locator('figure.metric-chart')
        .evaluateAll((els) => els.map((e) => e.getAttribute('data-key'))),
      ['val_loss', 'accuracy', 'loss'],
    );
    await page.goto(`${t.url}/ui/experiments/${experiment.id}/compare?sweep=${created.body.id}`);
    const overlay = page.locator('figure.compare-overlay[data-key="val_loss"]');
    await overlay.locator('.chart[data-drawn-lines="2"]').waitFor();
    assert.equal(await page.getByRole('combobox', { name: 'Metric' }).inputValue(), 'val_loss');
    assert.deepEqual(await overlay.locator('.u-legend .u-series .u-label').allInnerTexts(), [
      'lr=0.1',
      'lr=0.01',
    ]);
    assert.deepEqual(problems, []);
  });

  it('shows a managed run’s instance as ended once the run has, not as its last recorded “running”, then its final state', async () => {
    const { page } = session;
    const run = await must('post', `/experiments/${experimentId}/variations/1/runs`);
    const provisioned = await api().post(`${runUrl(1, run.r)}/provision`);
    assert.equal(provisioned.status, 202, JSON.stringify(provisioned.body));
    const instance = await t.as(orchestratorKey).put(`/orchestrator/runs/${run.id}/instance`, {
      provider: 'local',
      instance_id: 'local-1234',
      state: 'running',
    });
    assert.equal(instance.status, 200, JSON.stringify(instance.body));
    const worker = await workerKeyThroughExchange(t, orchestratorKey, run.id);
    const asWorker = t.as(worker.key);
    assert.equal((await asWorker.get(`${runUrl(1, run.r)}/config`)).status, 200);
    assert.equal((await asWorker.post(`${runUrl(1, run.r)}/start`, { environment: {} })).status, 200);

    await page.goto(`${t.url}/ui${runUrl(1, run.r)}`);
    const state = page.getByTestId('instance-state');
    await state.getByText('running', { exact: true }).waitFor();
    assert.equal((await asWorker.post(`${runUrl(1, run.r)}/succeed`)).status, 200);
    await page.locator('.badge.state-succeeded').waitFor();
    await state.locator('.badge', { hasText: 'ended' }).waitFor();
    assert.match(await state.innerText(), /ended with the run at .*\(last recorded: running\)/);
    assert.match(await page.locator('.instance-facts').innerText(), /local-1234/);
    // The saga's conclusion records the final state (test/orchestration/managed-run.test.ts): shown as it is.
    const ended = await t.as(orchestratorKey).put(`/orchestrator/runs/${run.id}/instance`, {
      provider: 'local',
      instance_id: 'local-1234',
      state: 'terminated',
    });
    assert.equal(ended.status, 200, JSON.stringify(ended.body));
    await page.reload();
    await state.locator('.badge', { hasText: 'terminated' }).waitFor();
    assert.doesNotMatch(await state.innerText(), /running/);

    const phone = await newSession(browser, dialogs, PHONE);
    await signIn(phone.page, t as never, user.key);
    await phone.page.goto(`${t.url}/ui${runUrl(1, 1)}`);
    await phone.page.locator('section.log-pane .log-row').first().waitFor();
    await screenshot(phone.page, 'run-log-390');
    const width = await phone.page.evaluate<number>('document.documentElement.scrollWidth');
    const wide = await phone.page.evaluate<string[]>(
      `[...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > ${PHONE.width}).map((e) => e.tagName + '.' + e.className).slice(0, 8)`,
    );
    assert.ok(width <= PHONE.width, `the run page scrolls sideways: ${width}px (${wide.join(', ')})`);
    await phone.context.close();
    assert.deepEqual(problems, []);
  });
});
