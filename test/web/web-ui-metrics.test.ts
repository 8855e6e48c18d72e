import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { startAssayServer, type AssayServer } from '../support/assay-server.ts';
import { launchChromium, screenshot } from '../support/browser.ts';
import { api, newSession, PHONE, signIn } from './support.ts';

// Run metrics in a real browser (Debian's Chromium) against a real `assay server` on the embedded default:
// a run's charts (a chart per key, log scale, smoothing, zoom that refetches the zoomed steps, live updates
// while the run runs) and the compare page's overlay, config scatters and metric columns. Every metric is
// logged through the HTTP API, as a runner would.

type Point = { key: string; step: number; value: number | string };
// The part of a canvas element the pixel count reads (the tests compile without the DOM's types).
type Canvas = {
  width: number;
  height: number;
  getContext(kind: '2d'): {
    getImageData(x: number, y: number, w: number, h: number): { data: Uint8ClampedArray };
  };
};

describe('web UI in Chromium: run metrics', () => {
  let dataDir: string;
  let server: AssayServer;
  let key: string;
  let browser: Browser;
  let session: { context: BrowserContext; page: Page };
  const dialogs: string[] = [];
  // What the browser reports that the page did wrong: CSP refusals, uncaught errors.
  const problems: string[] = [];
  // Every metrics URL the page asked for, in order.
  const metricRequests: URL[] = [];
  let experimentId = '';

  async function must(method: string, url: string, body?: unknown, status = 200) {
    const res = await api(server, key, method, url, body);
    assert.equal(res.status, status, `${method} ${url}: ${JSON.stringify(res.body)}`);
    return res.body;
  }
  const runUrl = (n: number, r: number) => `/experiments/${experimentId}/variations/${n}/runs/${r}`;
  async function startRun(n: number): Promise<number> {
    const run = await must('POST', `/experiments/${experimentId}/variations/${n}/runs`, undefined, 201);
    await must('GET', `${runUrl(n, run.r)}/config`);
    await must('POST', `${runUrl(n, run.r)}/start`, { environment: { os: 'linux' } });
    return run.r as number;
  }
  async function log(n: number, r: number, points: Point[]) {
    for (let i = 0; i < points.length; i += 1000)
      await must('POST', `${runUrl(n, r)}/metrics`, { metrics: points.slice(i, i + 1000) });
  }
  const series = (metric: string, steps: number, value: (step: number) => number | string): Point[] =>
    Array.from({ length: steps }, (_, step) => ({ key: metric, step, value: value(step) }));
  const chart = (page: Page, metric: string) => page.locator(`figure.metric-chart[data-key="${metric}"]`);
  /** The chart's root once uPlot has drawn `points` points (the chart writes what it drew on its root). */
  async function drawn(figure: Locator, points: number) {
    const root = figure.locator(`.chart[data-drawn-points="${points}"]`);
    await root.waitFor();
    return root;
  }
  /** Pixels of the plot canvas drawn in a colour close to `rgb`: the line is really on the canvas. */
  const pixelsOf = (figure: Locator, rgb: [number, number, number]) =>
    figure.locator('canvas').evaluate((canvas: Canvas, [r, g, b]) => {
      const data = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height).data;
      let n = 0;
      for (let i = 0; i < data.length; i += 4)
        if (Math.abs(data[i]! - r) + Math.abs(data[i + 1]! - g) + Math.abs(data[i + 2]! - b) < 30) n += 1;
      return n;
    }, rgb);
  const BLUE: [number, number, number] = [0x1f, 0x77, 0xb4];

  before(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'assay-web-metrics-'));
    server = await startAssayServer({ ASSAY_DATA_DIR: dataDir });
    key = server.bootstrapKey!;
    browser = await launchChromium();
    session = await newSession(browser, dialogs);
    session.page.on('console', (m) => {
      // The browser asks for /favicon.ico by itself; the service has none.
      if (m.location().url.endsWith('/favicon.ico')) return;
      if (m.type() === 'error' || /Content Security Policy/i.test(m.text()))
        problems.push(`${m.text()} (${m.location().url})`);
    });
    session.page.on('pageerror', (e) => problems.push(e.message));
    session.page.on('request', (r) => {
      const url = new URL(r.url());
      if (url.pathname.includes('/metrics')) metricRequests.push(url);
    });
    await signIn(session.page, server, key);

    const experiment = await must('POST', '/experiments', { name: 'Warmup and optimizer' }, 201);
    experimentId = experiment.id;
    for (const [lr, optimizer] of [
      [0.1, 'adam'],
      [0.01, 'sgd'],
      [0.001, 'adam'],
    ] as const)
      await must(
        'POST',
        `/experiments/${experimentId}/variations`,
        { config_yaml: `lr: ${lr}\noptimizer: ${optimizer}\nepochs: 3\n` },
        201,
      );
    await must('POST', `/experiments/${experimentId}/commit`);
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('draws a chart per key with its points: NaN and Infinity as gaps, log scale, smoothing, values readout', async () => {
    const { page } = session;
    const r = await startRun(1);
    // loss: 1/(step+1), with a NaN at 50 and an Infinity at 60 (two gaps); accuracy starts at 0, which a log
    // scale cannot place; a key with a slash travels URL-encoded; 5,000 points of a long series.
    await log(1, r, [
      ...series('loss', 200, (s) => (s === 50 ? 'NaN' : s === 60 ? 'Infinity' : 1 / (s + 1))),
      ...series('accuracy', 200, (s) => s / 200),
      ...series('train/lr', 200, (s) => 0.1 * 0.99 ** s),
      ...series('long', 5000, (s) => (s === 2345 ? 100 : Math.sin(s / 100))),
    ]);
    await must('POST', `${runUrl(1, r)}/succeed`);

    await page.goto(`${server.url}/ui${runUrl(1, r)}`);
    await page.getByRole('heading', { name: 'Metrics' }).waitFor();
    const loss = chart(page, 'loss');
    await drawn(loss, 198);
    assert.deepEqual(
      await page
        .locator('figure.metric-chart')
        .evaluateAll((els) => els.map((e) => e.getAttribute('data-key'))),
      ['accuracy', 'long', 'loss', 'train/lr'],
    );
    await drawn(chart(page, 'accuracy'), 200);
    await drawn(chart(page, 'train/lr'), 200);
    assert.match(
      await loss.locator('.metric-readout').innerText(),
      /last 0\.005 at step 199 · min 0\.005 · max ∞ · 200 points/,
    );
    assert.match(
      await chart(page, 'train/lr').locator('.metric-readout').innerText(),
      /last 0\.0135\d* at step 199/,
    );
    assert.ok((await pixelsOf(loss, BLUE)) > 200, 'the loss line is drawn on the canvas');

    // The series was asked for with about a point per pixel of the chart, the key URL-encoded.
    const lossRequest = metricRequests.find((u) => u.pathname.endsWith('/metrics/loss'))!;
    const width = (await loss.locator('canvas').boundingBox())!.width;
    const maxPoints = Number(lossRequest.searchParams.get('max_points'));
    assert.ok(Math.abs(maxPoints - width) <= 100, `max_points ${maxPoints} for a ${width} px chart`);
    assert.ok(metricRequests.some((u) => u.pathname.endsWith('/metrics/train%2Flr')));

    // The long series comes downsampled, its spike kept; the readout says so.
    const long = chart(page, 'long');
    await long.getByText('of 5,000 points (downsampled on the server)').waitFor();
    const longPoints = Number(await long.locator('.chart').getAttribute('data-drawn-points'));
    assert.ok(longPoints <= maxPoints && longPoints >= maxPoints / 2, `${longPoints} points drawn`);
    assert.match(await long.locator('.metric-readout').innerText(), /max 100 /);

    // Values readout: the legend shows the step under the cursor and the loss there, 1/(step+1).
    const over = loss.locator('.u-over');
    await over.scrollIntoViewIfNeeded();
    const box = (await over.boundingBox())!;
    await page.mouse.move(box.x + box.width * 0.3, box.y + box.height / 2);
    const legend = loss.locator('.u-legend .u-series');
    await legend.first().locator('.u-value', { hasText: /^\d+$/ }).waitFor();
    const step = Number(await legend.first().locator('.u-value').innerText());
    assert.ok(step > 40 && step < 80, `step ${step} under the cursor`);
    const expected = step === 50 || step === 60 ? '—' : String(Number((1 / (step + 1)).toPrecision(6)));
    assert.equal(await legend.nth(1).locator('.u-value').innerText(), expected);
    await screenshot(page, 'run-metrics');

    // Log scale: accuracy's 0 at step 0 has no place on it, so one point fewer is drawn.
    await page.getByLabel('Log scale').check();
    await drawn(chart(page, 'accuracy'), 199);
    assert.equal(await chart(page, 'accuracy').locator('.chart').getAttribute('data-scale'), 'log');
    await page.getByLabel('Log scale').uncheck();
    await drawn(chart(page, 'accuracy'), 200);

    // Smoothing adds a smoothed line over the faint raw one.
    await page.getByLabel('Smoothing').fill('0.9');
    await loss.locator('.chart[data-lines="2"]').waitFor();
    await loss.locator('.u-legend').getByText('loss (smoothed)').waitFor();
    assert.equal(await page.locator('.smoothing-value').innerText(), '0.90');
    await screenshot(page, 'run-metrics-smoothed');
    await page.getByLabel('Smoothing').fill('0');
    await loss.locator('.chart[data-lines="1"]').waitFor();
    assert.deepEqual(problems, []);
  });

  it('zooms by dragging: the zoomed steps are read again in full detail, and a double click zooms out', async () => {
    const { page } = session;
    const long = chart(page, 'long');
    const over = long.locator('.u-over');
    await over.scrollIntoViewIfNeeded();
    const box = (await over.boundingBox())!;
    const before = metricRequests.length;
    // Drag across about a tenth of the plot, in its middle: a few hundred of the 5,000 steps.
    await page.mouse.move(box.x + box.width * 0.45, box.y + box.height / 2);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width * 0.5, box.y + box.height / 2, { steps: 5 });
    await page.mouse.up();
    await long.getByRole('button', { name: 'Zoom out' }).waitFor();
    const zoomed = metricRequests.slice(before).find((u) => u.pathname.endsWith('/metrics/long'))!;
    const min = Number(zoomed.searchParams.get('min_step'));
    const max = Number(zoomed.searchParams.get('max_step'));
    assert.ok(min > 2000 && min < 2400 && max > 2400 && max < 2700, `zoomed to ${min}–${max}`);
    const count = max - min + 1;
    // Fewer steps than max_points: every one of them, no downsampling.
    await long
      .getByText(`${count.toLocaleString('en-US')} of ${count.toLocaleString('en-US')} points`)
      .waitFor();
    const root = await drawn(long, count);
    assert.equal(Number(await root.getAttribute('data-x-min')), min);
    assert.equal(Number(await root.getAttribute('data-x-max')), max);
    assert.match(await long.locator('.chart-range').innerText(), new RegExp(`steps ${min}–${max}`));
    await screenshot(page, 'run-metrics-zoomed');

    const beforeReset = metricRequests.length;
    await over.dblclick();
    await long.getByRole('button', { name: 'Zoom out' }).waitFor({ state: 'detached' });
    await long.getByText('of 5,000 points (downsampled on the server)').waitFor();
    const reset = metricRequests.slice(beforeReset).filter((u) => u.pathname.endsWith('/metrics/long'));
    // Back to the whole range: from the cache or a new read, never with a step range.
    assert.ok(reset.every((u) => !u.searchParams.has('min_step')));
    assert.deepEqual(problems, []);
  });

  it('updates the charts while the run runs, every 2 s, and stops reading once it has ended', async () => {
    const { page } = session;
    const r = await startRun(2);
    await log(
      2,
      r,
      series('loss', 10, (s) => 2 - s / 10),
    );
    await page.goto(`${server.url}/ui${runUrl(2, r)}`);
    const loss = chart(page, 'loss');
    await drawn(loss, 10);
    assert.match(await loss.locator('.metric-readout').innerText(), /at step 9 .* 10 points/);

    // A new key and more points arrive without a reload.
    await log(2, r, [
      ...series('loss', 25, (s) => 2 - s / 10).slice(10),
      { key: 'grad_norm', step: 0, value: 3 },
    ]);
    await drawn(loss, 25);
    await loss.getByText('at step 24').waitFor();
    await drawn(chart(page, 'grad_norm'), 1);
    await screenshot(page, 'run-metrics-live');

    await must('POST', `${runUrl(2, r)}/succeed`);
    await page.locator('.badge.state-succeeded').waitFor();
    // Once ended, the charts are read once more (the end is in their query key), then no more.
    await page.waitForTimeout(500);
    const settled = metricRequests.length;
    await page.waitForTimeout(4500);
    assert.equal(metricRequests.length, settled, 'no metrics polling after the run ended');
    assert.deepEqual(problems, []);
  });

  it('compares runs: one key’s curves overlaid, final value by each varied config, metric columns', async () => {
    const { page } = session;
    // Runs 1.1 and 2.1 have logged; 3.1 logs a loss that ends low and an accuracy.
    const r3 = await startRun(3);
    await log(3, r3, [
      ...series('loss', 100, (s) => (s === 99 ? 0.01 : 1 - s / 200)),
      ...series('accuracy', 100, (s) => s / 100),
    ]);
    await must('POST', `${runUrl(3, r3)}/succeed`);

    await page.goto(`${server.url}/ui/experiments/${experimentId}/compare`);
    await page.getByRole('heading', { name: 'Compare runs' }).waitFor();
    const table = page.locator('table.compare');
    const header = (name: string) => table.getByRole('columnheader', { name, exact: true });
    await header('metric loss (last)').waitFor();
    // Each run's key list arrives on its own; the default columns (the first four keys) settle once all have.
    await header('metric grad_norm (last)').waitFor();
    await header('metric long (last)').waitFor();
    const headerTexts = async () =>
      (await table.locator('thead th').allInnerTexts()).map((h) =>
        h
          .replace(/[▲▼]/g, '')
          .replace(/^metric\s+/, '')
          .trim(),
      );
    const figures = (...keys: string[]) => keys.flatMap((k) => [`${k} (last)`, `${k} (min)`, `${k} (max)`]);
    const runColumns = ['Run', 'Variation', 'lr', 'optimizer', 'State', 'Duration'];
    // The first four keys have columns until the reader picks.
    assert.deepEqual(await headerTexts(), [
      ...runColumns,
      ...figures('accuracy', 'grad_norm', 'long', 'loss'),
    ]);
    const keys = page.getByRole('group', { name: 'Metric columns' });
    await keys.getByLabel('long').uncheck();
    await keys.getByLabel('train/lr').check();
    await header('metric train/lr (last)').waitFor();
    const headers = await headerTexts();
    assert.deepEqual(headers, [...runColumns, ...figures('accuracy', 'grad_norm', 'loss', 'train/lr')]);
    const column = async (name: string) =>
      (await table.locator(`tbody tr td:nth-child(${headers.indexOf(name) + 1})`).allInnerTexts()).map((t) =>
        t.trim(),
      );
    await table.locator('td.col-logged', { hasText: '…' }).first().waitFor({ state: 'detached' });
    assert.deepEqual(await column('Run'), ['1.1', '2.1', '3.1']);
    assert.deepEqual(await column('loss (last)'), ['0.005', '-0.4', '0.01']);
    assert.deepEqual(await column('loss (min)'), ['0.005', '-0.4', '0.01']);
    assert.deepEqual(await column('loss (max)'), ['∞', '2', '1']);
    assert.deepEqual(await column('grad_norm (last)'), ['—', '3', '—']);

    // Sorting by a logged figure.
    await header('metric loss (last)').getByRole('button').click();
    assert.deepEqual(await column('Run'), ['2.1', '1.1', '3.1']);

    // The overlay: one line per run that logged the key, a legend entry each.
    const overlay = page.locator('figure.compare-overlay');
    await page.getByRole('combobox', { name: 'Metric' }).selectOption('loss');
    await overlay.locator('.chart[data-drawn-lines="3"]').waitFor();
    // Each run on its own steps (uPlot's faceted mode): the legend names the runs by the config values that
    // differ, with no step column.
    assert.deepEqual(await overlay.locator('.u-legend .u-series .u-label').allInnerTexts(), [
      'lr=0.1, optimizer=adam',
      'lr=0.01, optimizer=sgd',
      'lr=0.001, optimizer=adam',
    ]);
    assert.equal(await overlay.locator('.chart').getAttribute('data-drawn-points'), String(198 + 25 + 100));

    // A scatter per varied config value against the final loss: lr on a log axis, optimizer by name.
    const lr = page.locator('figure.config-scatter[data-path="lr"]');
    await lr.locator('.chart[data-drawn-points="3"]').waitFor();
    const optimizer = page.locator('figure.config-scatter[data-path="optimizer"]');
    await optimizer.locator('.chart[data-drawn-points="3"]').waitFor();
    assert.equal(await page.locator('figure.config-scatter').count(), 2);
    await screenshot(page, 'compare-metrics');

    // Another key: accuracy, logged by runs 1.1 and 3.1 only.
    await page.getByRole('combobox', { name: 'Metric' }).selectOption('accuracy');
    await overlay.locator('.chart[data-drawn-lines="2"]').waitFor();
    await page.getByRole('heading', { name: 'Final accuracy by config' }).waitFor();
    await lr.locator('.chart[data-drawn-points="2"]').waitFor();
    assert.deepEqual(problems, []);
    assert.deepEqual(dialogs, []);
  });

  it('fits the compare page in 390 px: the table scrolls in its own box, the charts fit the screen', async () => {
    const phone = await newSession(browser, dialogs, PHONE);
    await signIn(phone.page, server, key);
    await phone.page.goto(`${server.url}/ui/experiments/${experimentId}/compare`);
    await phone.page.getByRole('heading', { name: 'Compare runs' }).waitFor();
    const overlay = phone.page.locator('figure.compare-overlay');
    await overlay.locator('.chart[data-drawn-lines]').waitFor();
    const scatters = phone.page.locator('figure.config-scatter');
    await scatters.first().waitFor();
    for (const scatter of await scatters.all()) await scatter.locator('.chart[data-drawn-points]').waitFor();
    await phone.page
      .locator('table.compare td.col-logged', { hasText: '…' })
      .first()
      .waitFor({ state: 'detached' });
    const width = await phone.page.evaluate<number>('document.documentElement.scrollWidth');
    assert.ok(width <= PHONE.width, `the compare page scrolls sideways: ${width}px`);
    const chartWidth = await overlay
      .locator('canvas')
      .first()
      .evaluate((c: { clientWidth: number }) => c.clientWidth);
    assert.ok(chartWidth > 200 && chartWidth <= PHONE.width, `overlay ${chartWidth}px wide`);
    await screenshot(phone.page, 'compare-metrics-390');
    await phone.context.close();
  });

  it('offers a key picker past 20 keys: a paged, searchable list, and a chart only for each key picked', async () => {
    const { page } = session;
    const r = await startRun(1);
    const layers = Array.from({ length: 55 }, (_, i) => `layer${String(i).padStart(2, '0')}/grad_norm`);
    // In byte order, as the service lists them: layer… sorts before loss.
    const keys = ['accuracy', 'eval/acc', 'eval/loss', ...layers, 'loss', 'lr'];
    await log(
      1,
      r,
      keys.flatMap((k, i) => series(k, 30, (s) => i + s / 30)),
    );
    await must('POST', `${runUrl(1, r)}/succeed`);
    const before = metricRequests.length;
    await page.goto(`${server.url}/ui${runUrl(1, r)}`);
    const picker = page.locator('section.key-picker');
    await picker.getByRole('heading', { name: 'Metric keys' }).waitFor();
    const rows = picker.locator('table.key-list tbody tr');
    await rows.first().waitFor();
    // The first page: 50 of the 60 keys, in byte order; the run's first four keys are charted.
    const listed = () => rows.evaluateAll((els) => els.map((e) => e.getAttribute('data-key')));
    assert.deepEqual(await listed(), keys.slice(0, 50));
    const charted = () =>
      page.locator('figure.metric-chart').evaluateAll((els) => els.map((e) => e.getAttribute('data-key')));
    await drawn(chart(page, 'layer00/grad_norm'), 30);
    assert.deepEqual(await charted(), keys.slice(0, 4));
    await picker.getByText('Charting 4.').waitFor();
    assert.match(await rows.nth(2).innerText(), /eval\/loss\s+2\.96\d*\s+2\s+2\.96\d*\s+30/);

    // The next page holds the other ten; a key picked there gets its chart.
    await picker.getByRole('button', { name: 'Next page' }).click();
    await picker.locator('tr[data-key="lr"]').waitFor();
    assert.deepEqual(await listed(), keys.slice(50));
    await picker.getByLabel('loss', { exact: true }).check();
    await drawn(chart(page, 'loss'), 30);
    await picker.getByRole('button', { name: 'Previous page' }).click();
    await picker.locator('tr[data-key="accuracy"]').waitFor();

    // Search: the keys holding the text, letter case ignored; unpicking removes a chart.
    await picker.getByLabel('Search keys').fill('LOSS');
    await picker.locator('tr[data-key="accuracy"]').waitFor({ state: 'detached' });
    assert.deepEqual(await listed(), ['eval/loss', 'loss']);
    await picker.getByLabel('eval/loss').uncheck();
    await chart(page, 'eval/loss').waitFor({ state: 'detached' });
    assert.deepEqual(await charted(), ['accuracy', 'eval/acc', 'layer00/grad_norm', 'loss']);
    await picker.getByLabel('Search keys').fill('');
    await picker.locator('tr[data-key="accuracy"]').waitFor();
    await screenshot(page, 'run-metrics-key-picker');

    // At most twelve charts at once: past that, the other keys' boxes are off.
    await picker.getByRole('button', { name: 'Chart none' }).click();
    await page.locator('figure.metric-chart').first().waitFor({ state: 'detached' });
    for (const k of keys.slice(0, 12)) await picker.getByLabel(k, { exact: true }).check();
    await picker.getByText('Charting 12.').waitFor();
    assert.equal(await picker.getByLabel(keys[12]!, { exact: true }).isDisabled(), true);
    assert.equal(await page.locator('figure.metric-chart').count(), 12);

    // Series were read for charted keys only, never one per key of the run.
    const read = new Set(
      metricRequests
        .slice(before)
        .map((u) => decodeURIComponent(u.pathname.split('/metrics/')[1] ?? ''))
        .filter((k) => k !== ''),
    );
    assert.deepEqual([...read].sort(), [...keys.slice(0, 12), 'loss'].sort());
    assert.deepEqual(problems, []);
  });

  it("takes at most 50 columns from the runs' metrics.json, and says so", async () => {
    const { page } = session;
    const experiment = await must('POST', '/experiments', { name: 'Many figures' }, 201);
    const exp = `/experiments/${experiment.id}`;
    await must('POST', `${exp}/variations`, { config_yaml: 'lr: 0.1\n' }, 201);
    await must('POST', `${exp}/commit`);
    const run = await must('POST', `${exp}/variations/1/runs`, undefined, 201);
    const runPath = `${exp}/variations/1/runs/${run.r}`;
    await must('GET', `${runPath}/config`);
    await must('POST', `${runPath}/start`, { environment: {} });
    const figures = Object.fromEntries(
      Array.from({ length: 80 }, (_, i) => [`f${String(i).padStart(2, '0')}`, i]),
    );
    await must(
      'POST',
      '/assets',
      {
        kind: 'output',
        name: 'metrics.json',
        run: { experiment_id: experiment.id, n: 1, r: run.r },
        content: JSON.stringify(figures),
        content_type: 'application/json',
      },
      201,
    );
    await must('POST', `${runPath}/succeed`);
    await page.goto(`${server.url}/ui${exp}/compare`);
    await page.getByText('hold 80 figures: the table shows the first 50 of them').waitFor();
    const metricHeaders = page.locator('table.compare thead th.col-metric');
    assert.equal(await metricHeaders.count(), 50);
    assert.equal((await metricHeaders.last().innerText()).replace(/^metric\s+/, '').trim(), 'f49');
    assert.equal(await page.locator('table.compare td.col-metric').last().innerText(), '49');
    assert.deepEqual(problems, []);
  });
});
