// The compare page's metric charts with many long runs, against the same page with few, measured in one run:
// 100 runs × 10 keys × 10,000 steps (10 million points, logged through the API in batches of 1,000), the page
// opened in Chromium on the real service until every chart is drawn, then two interactions, on a service that
// keeps ended runs' compared curves and on one that reads them on every look. Prints figures.
// Also the JavaScript a first look at the page loads before it renders (gzipped, from the build's chunk graph).
// Run: node bench/web-metrics.ts [--runs 100] [--keys 10] [--steps 10000] [--baseline 10] [--rounds 3]
//      [--concurrency 8] [--guard]
// --guard: the regression guard's short run (100 runs × 2 keys × 2,000 steps, 2 rounds; about a minute and a
// half), ending with its ratio lines for bench/guard.ts.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { Agent } from 'undici';
import { startAssayServer } from '../test/support/assay-server.ts';
import { launchChromium } from '../test/support/browser.ts';
import { startBenchService } from './support/bench-service.ts';
import { printGuard } from './support/guard.ts';
import { initialJs, kb } from './support/initial-js.ts';
import { openTimed, timeAction } from './support/page-timing.ts';
import { machine, median, ms, options, publish, table } from './support/report.ts';
import { call, metricKeyName as keyName, seedMetricExperiment, type SeedApi } from './support/web-seed.ts';

const argv = process.argv.slice(2);
const guard = argv.includes('--guard');
const o = options(
  argv.filter((a) => a !== '--guard'),
  {
    runs: 100,
    keys: guard ? 2 : 10,
    steps: guard ? 2_000 : 10_000,
    baseline: 10,
    rounds: guard ? 2 : 3,
    concurrency: 8,
  },
);
/** The initial-JavaScript goal of the compare page, gzipped (#27). */
const INITIAL_JS_GOAL_KB = 150;
const COMPARE_PAGE = 'ui/pages/compare-page.tsx';
const CURVE_READS = 10;
const WARMUP_RUNS = 2;
const log = (line: string) => console.log(`[web-metrics] ${line}`);
const seed = (api: SeedApi, runs: number) =>
  seedMetricExperiment(api, { runs, keys: o.keys, steps: o.steps, concurrency: o.concurrency });

// The page is drawn when the overlay has a line per run, each scatter its points, and no metric cell waits.
const drawnCondition = (runs: number, key: string) =>
  [
    `document.querySelector(${JSON.stringify(`figure.compare-overlay[data-key="${key}"] .chart[data-drawn-lines="${runs}"]`)}) !== null`,
    `document.querySelectorAll('figure.config-scatter').length > 0`,
    `document.querySelectorAll('figure.config-scatter .chart[data-drawn-points]').length === document.querySelectorAll('figure.config-scatter').length`,
    `document.querySelectorAll('td.col-logged').length > 0`,
    `![...document.querySelectorAll('td.col-logged')].some((td) => td.textContent === '…')`,
  ].join(' && ');

// Long tasks since navigation (the observer's buffer holds those before it was created).
const LONG_TASKS = `new Promise((resolve) => {
  const seen = [];
  const observer = new PerformanceObserver((list) => seen.push(...list.getEntries()));
  observer.observe({ type: 'longtask', buffered: true });
  setTimeout(() => { observer.disconnect(); resolve(seen.map((e) => e.duration)); }, 50);
})`;

interface Figures {
  drawn: number[];
  longest: number[];
  blocked: number[];
  key: number[];
  logScale: number[];
}
const empty = (): Figures => ({ drawn: [], longest: [], blocked: [], key: [], logScale: [] });

const service = await startBenchService('web_metrics');
const dispatcher = new Agent({ connections: o.concurrency });
const browser = await launchChromium();
const stops: Array<() => Promise<void>> = [];
try {
  const api = { url: service.url, key: service.key, dispatcher };
  const started = performance.now();
  const scopes = [
    { label: 'many', runs: o.runs },
    { label: 'baseline', runs: o.baseline },
  ];
  const seeded: Array<{ label: string; runs: number; id: string; points: number; seconds: number }> = [];
  for (const s of scopes) {
    const t = performance.now();
    const result = await seed(api, s.runs);
    const seconds = (performance.now() - t) / 1000;
    log(
      `seeded ${s.label}: ${s.runs} runs, ${result.points.toLocaleString('en-US')} points in ${seconds.toFixed(1)} s`,
    );
    seeded.push({ ...s, ...result, seconds });
  }
  const warmup = await seed(api, WARMUP_RUNS);
  log(`seeding took ${((performance.now() - started) / 1000).toFixed(1)} s`);
  // Eleven million fresh rows wake autovacuum, which would then share the two cores with the rounds: a
  // comparison is looked at after its sweep, by which time it has run. Done here, on its own, and timed.
  const vacuumed = performance.now();
  const client = new pg.Client({ connectionString: service.databaseUrl });
  await client.connect();
  try {
    await client.query('VACUUM (ANALYZE)');
  } finally {
    await client.end();
  }
  log(`VACUUM (ANALYZE) took ${((performance.now() - vacuumed) / 1000).toFixed(1)} s`);

  // A second service process on the same database that keeps no compared curves: every look there reads every
  // curve from PostgreSQL, as the first look at an experiment does on any service.
  const uncachedDir = await mkdtemp(path.join(tmpdir(), 'assay-bench-web-metrics-read-'));
  const uncached = await startAssayServer({
    DATABASE_URL: service.databaseUrl,
    ASSAY_ORCHESTRATOR: 'off',
    ASSAY_DATA_DIR: uncachedDir,
    ASSAY_CURVE_CACHE_POINTS: '0',
  });
  stops.push(async () => {
    await uncached.stop();
    await rm(uncachedDir, { recursive: true, force: true });
  });
  // The service that reads every curve goes first in each round, so in round 0 the first look on the other
  // one comes from a browser that has already started and compiled the UI once, as a reader's has.
  const services = [
    { label: 'read', url: uncached.url },
    { label: 'cached', url: service.url },
  ];
  const figureKey = (scope: string, target: string) => `${scope} ${target}`;
  const figures = new Map(
    seeded.flatMap((s) => services.map((v) => [figureKey(s.label, v.label), empty()] as const)),
  );
  const first = keyName(0);
  const second = keyName(1);
  // Round 0 warms the browser and the services; it is not counted in the medians, and its loads on the
  // service that keeps curves are reported on their own: the first look at each experiment, whose curves that
  // service has not read before (src/server/metrics/curve-cache.ts).
  const firstDrawn = new Map<string, number>();
  // Each service process and the browser first draw a small comparison of their own, so that a first look is
  // the first read of its curves, not also the process's first request on these routes (V8 still interpreting
  // their code) or the browser's first compile of the UI: a reader's service has served other pages before.
  const coldDrawn = new Map<string, number>();
  for (const v of services) {
    const page = await openTimed(
      browser,
      `${v.url}/ui/experiments/${warmup.id}/compare`,
      service.key,
      drawnCondition(WARMUP_RUNS, first),
    );
    coldDrawn.set(v.label, page.renderedMs);
    await page.close();
  }
  log(
    `warm-up comparison (${WARMUP_RUNS} runs) drawn in ${[...coldDrawn].map(([k, d]) => `${k} ${ms(d)}`).join(', ')} ms`,
  );
  // Then each process answers the large experiment's curves of its last key, which no round draws, a few
  // times: V8 optimises the code that answers a hundred curves only once it has run it, which would otherwise
  // land on whichever look comes first, not on the reads.
  const warmKey = keyName(o.keys - 1);
  const warmReads = new Map<string, number[]>();
  for (const v of services) {
    const times: number[] = [];
    for (let i = 0; i < 3; i++) {
      const t = performance.now();
      await call(
        { ...api, url: v.url },
        'GET',
        `/experiments/${seeded[0]!.id}/metrics/${warmKey}?max_points=500`,
      );
      times.push(performance.now() - t);
    }
    warmReads.set(v.label, times);
  }
  log(
    `warm-up reads of ${warmKey}: ${[...warmReads].map(([k, t]) => `${k} ${t.map(ms).join(' / ')}`).join('; ')} ms`,
  );
  for (let round = 0; round <= o.rounds; round++) {
    for (const v of services)
      for (const s of seeded) {
        const page = await openTimed(
          browser,
          `${v.url}/ui/experiments/${s.id}/compare`,
          service.key,
          drawnCondition(s.runs, first),
        );
        const longTasks = await page.page.evaluate<number[]>(LONG_TASKS);
        // Another key: its 100 curves are read and drawn.
        const key = await timeAction(
          page.page,
          'change',
          `document.querySelector(${JSON.stringify(`figure.compare-overlay[data-key="${second}"] .chart[data-drawn-lines="${s.runs}"]`)}) !== null`,
          () =>
            page.page
              .getByRole('combobox', { name: 'Metric' })
              .selectOption(second)
              .then(() => undefined),
        );
        // Log scale: no request, every chart rebuilt from the data it holds.
        const logScale = await timeAction(
          page.page,
          'change',
          `document.querySelector(${JSON.stringify(`figure.compare-overlay .chart[data-scale="log"][data-drawn-lines="${s.runs}"]`)}) !== null`,
          () => page.page.getByLabel('Log scale').check(),
        );
        await page.close();
        if (round === 0) {
          log(`round 0: ${s.label} ${v.label} drawn in ${ms(page.renderedMs)} ms`);
          if (v.label === 'cached') firstDrawn.set(s.label, page.renderedMs);
          continue;
        }
        const f = figures.get(figureKey(s.label, v.label))!;
        f.drawn.push(page.renderedMs);
        f.longest.push(Math.max(0, ...longTasks));
        f.blocked.push(longTasks.reduce((sum, d) => sum + Math.max(0, d - 50), 0));
        f.key.push(key.ms);
        f.logScale.push(logScale.ms);
      }
    const drawn = [...figures].map(([k, f]) => `${k} ${ms(f.drawn.at(-1) ?? NaN)}`).join(', ');
    log(`round ${round} done${round === 0 ? ' (warm-up)' : `: drawn (ms) ${drawn}`}`);
  }

  // The page's one read of every curve of the first key (comparePoints: 500 points a curve past 10 runs), on
  // its own, from this process: what the service spends answering it, without the browser.
  const curvesMs = new Map<string, number[]>();
  for (const v of services)
    for (const s of seeded) {
      const times: number[] = [];
      for (let i = 0; i < CURVE_READS; i++) {
        const t = performance.now();
        await call(
          { ...api, url: v.url },
          'GET',
          `/experiments/${s.id}/metrics/${first}?max_points=${s.runs > 10 ? 500 : 1000}`,
        );
        times.push(performance.now() - t);
      }
      curvesMs.set(figureKey(s.label, v.label), times);
    }

  const row = (s: (typeof seeded)[number], v: (typeof services)[number]) => {
    const f = figures.get(figureKey(s.label, v.label))!;
    return [
      `${s.runs} runs × ${o.keys} keys × ${o.steps.toLocaleString('en-US')} steps`,
      v.label === 'cached' ? 'kept after the first look' : 'read on every look',
      ms(median(f.drawn)),
      ms(median(curvesMs.get(figureKey(s.label, v.label))!)),
      ms(median(f.longest)),
      ms(median(f.blocked)),
      ms(median(f.key)),
      ms(median(f.logScale)),
    ];
  };
  const many = figures.get(figureKey('many', 'cached'))!;
  const base = figures.get(figureKey('baseline', 'cached'))!;
  const manyRead = figures.get(figureKey('many', 'read'))!;
  const baseRead = figures.get(figureKey('baseline', 'read'))!;
  const ratio = (a: number[], b: number[]) => (median(a) / median(b)).toFixed(2);
  const seedRate = (s: (typeof seeded)[number]) => Math.round(s.points / s.seconds).toLocaleString('en-US');
  const js = await initialJs(COMPARE_PAGE);
  const entryJs = await initialJs();
  const firstRatio = (firstDrawn.get('many') ?? NaN) / (firstDrawn.get('baseline') ?? NaN);
  const report = (markdown: string) =>
    guard ? console.log(`\n${markdown}`) : publish('web-metrics', markdown);
  await report(
    [
      '## Web UI metric charts',
      '',
      `\`node bench/web-metrics.ts\` (${new Date().toISOString().slice(0, 10)}; ${machine()})`,
      '',
      `Seeded through the API: \`POST …/runs/{r}/metrics\` with 1,000 points a call, ${o.concurrency} calls in flight`,
      `(${seedRate(seeded[0]!)} points/s for the large experiment, ${seedRate(seeded[1]!)} for the baseline), on PostgreSQL.`,
      'Then `VACUUM (ANALYZE)`, so autovacuum does not share the cores with the rounds.',
      'The compare page in Chromium, a fresh context (cold HTTP cache) per load, medians of',
      `${o.rounds} rounds after a warm-up. Drawn: navigation start → the first frame with the overlay of the first`,
      'key drawn with a line per run, every config scatter drawn and every metric cell filled. Longest task and',
      'blocking (the sum over long tasks of their time past 50 ms): main-thread long tasks from navigation to',
      'drawn. Key: choosing another key → its overlay drawn (its series read and drawn). Log scale: the toggle →',
      "the overlay redrawn on a log axis (no request). Curves read: the page's request for every run's curve of the",
      `first key, sent on its own from the benchmark after the rounds (median of ${CURVE_READS}).`,
      '',
      'Each page is measured on two service processes over the same database: the one that seeded it, which keeps',
      'ended runs’ compared curves after their first read (`ASSAY_CURVE_CACHE_POINTS`, default), and one started',
      'with `ASSAY_CURVE_CACHE_POINTS=0`, where every look reads every curve from PostgreSQL as a first look does.',
      '',
      table(
        [
          'Experiment',
          'Curves',
          'Drawn (ms)',
          'Curves read (ms)',
          'Longest task (ms)',
          'Blocking (ms)',
          'Key (ms)',
          'Log scale (ms)',
        ],
        seeded.flatMap((s) => services.map((v) => row(s, v))),
      ),
      '',
      `Many/baseline: drawn ${ratio(many.drawn, base.drawn)}×, key ${ratio(many.key, base.key)}×, log scale ${ratio(many.logScale, base.logScale)}× (curves kept);`,
      `drawn ${ratio(manyRead.drawn, baseRead.drawn)}×, key ${ratio(manyRead.key, baseRead.key)}× (curves read on every look).`,
      '',
      `First look (the warm-up round on the service that keeps curves: it had not read these curves before, so none`,
      `came from its cache; the browser had loaded the same pages from the other service just before, and each service had drawn its own ${WARMUP_RUNS}-run comparison and answered another key's curves, below): drawn in ${ms(firstDrawn.get('many') ?? NaN)} ms with ${o.runs} runs, ${ms(firstDrawn.get('baseline') ?? NaN)} ms with ${o.baseline}.`,
      `The very first page of each service process (its ${WARMUP_RUNS}-run comparison, the first also the browser's first page):`,
      `${[...coldDrawn].map(([k, d]) => `${ms(d)} ms (${k === 'read' ? 'reading every curve, loaded first' : 'keeping curves'})`).join(', ')}.`,
      `Then each process answered the ${o.runs}-run experiment's curves of ${warmKey} (no round draws that key) three times:`,
      `${[...warmReads].map(([k, t]) => `${t.map(ms).join(' / ')} ms (${k === 'read' ? 'reading every curve' : 'keeping curves: its first read'})`).join(', ')}.`,
      `First look, ${o.runs} runs ÷ ${o.baseline}: ${firstRatio.toFixed(2)}× (every look reading every curve: ${ratio(manyRead.drawn, baseRead.drawn)}×).`,
      '',
      `Initial JavaScript of the compare page (what it loads before it first renders: the entry and the page's`,
      `chunks, from dist/web/.vite/manifest.json): ${kb(js.gzipBytes)} KiB gzipped (${kb(js.bytes)} KiB minified) in`,
      `${js.files.length} files, of which the entry every page loads ${kb(entryJs.gzipBytes)} KiB gzipped; goal ≤ ${INITIAL_JS_GOAL_KB} KB.`,
    ].join('\n'),
  );
  if (guard) {
    printGuard({
      name: 'web/compare-100-runs-vs-10',
      ratio: median(manyRead.drawn) / median(baseRead.drawn),
      higherIsBetter: false,
      what: `compare page drawn, every curve read (a first look): ${o.runs} runs ÷ ${o.baseline} runs`,
    });
    printGuard({
      name: 'web/compare-initial-js-vs-goal',
      ratio: js.gzipBytes / 1024 / INITIAL_JS_GOAL_KB,
      higherIsBetter: false,
      what: `compare page's initial JavaScript, gzipped KiB ÷ ${INITIAL_JS_GOAL_KB}`,
    });
  }
} finally {
  for (const stop of stops) await stop();
  await browser.close();
  await dispatcher.close();
  await service.stop();
}
