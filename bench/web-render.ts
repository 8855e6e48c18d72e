// The web UI's render time with many items, against the same pages with few, measured in one run: the
// experiments list (1,000 experiments; the UI shows 25 a page) and an experiment's run table (1,000 runs in
// two variations, shown 100 a page) in Chromium on the real service. Prints figures (not a test).
// Run: node bench/web-render.ts [--experiments 1000] [--runs 1000] [--baseline 10] [--rounds 5]
//   [--concurrency 8] [--guard]
// --guard: the regression guard's short run (30 experiments, 1,000 runs, 3 rounds; about a minute), ending
// with its ratio lines for bench/guard.ts.
import { Agent } from 'undici';
import { launchChromium } from '../test/support/browser.ts';
import { startBenchService } from './support/bench-service.ts';
import { printGuard } from './support/guard.ts';
import { count, openTimed, timeAction } from './support/page-timing.ts';
import { machine, median, ms, options, publish, table } from './support/report.ts';
import { createUser, seedScope } from './support/web-seed.ts';

const argv = process.argv.slice(2);
const guard = argv.includes('--guard');
const o = options(
  argv.filter((a) => a !== '--guard'),
  { experiments: guard ? 30 : 1000, runs: 1000, baseline: 10, rounds: guard ? 3 : 5, concurrency: 8 },
);
const LIST_PAGE = 25; // the experiments page's page size
const RUN_PAGE = 100; // the run table's page size (RUN_TABLE_PAGE)
const ROWS = 'table.experiments tbody tr';
const RUN_ROWS = 'table.runs tbody tr';
const VARIATION = 'section[aria-labelledby="runs-title"] .page-title select';
const log = (line: string) => console.log(`[web-render] ${line}`);

interface Figures {
  rendered: number[];
  action: number[];
  interactive: number[];
  paging: number[];
}
const empty = (): Figures => ({ rendered: [], action: [], interactive: [], paging: [] });

const service = await startBenchService('web_render');
const dispatcher = new Agent({ connections: o.concurrency });
const browser = await launchChromium();
try {
  const big = { url: service.url, key: service.key, dispatcher };
  const small = { ...big, key: await createUser(big, 'baseline@example.test') };
  const started = performance.now();
  const scopes = [
    { label: 'many', api: big, experiments: o.experiments, runs: o.runs },
    { label: 'baseline', api: small, experiments: o.baseline, runs: o.baseline },
  ];
  const seeded = [];
  for (const s of scopes) {
    seeded.push({ ...s, runsExperiment: await seedScope(s.api, { ...s, concurrency: o.concurrency }) });
    log(`seeded ${s.label}: ${s.experiments} experiments, ${s.runs} runs`);
  }
  log(`seeding took ${((performance.now() - started) / 1000).toFixed(1)} s`);

  const list = new Map(seeded.map((s) => [s.label, empty()]));
  const runs = new Map(seeded.map((s) => [s.label, empty()]));
  // Round 0 warms the service and the database; it is not counted.
  for (let round = 0; round <= o.rounds; round++) {
    for (const s of seeded) {
      const shown = Math.min(LIST_PAGE, s.experiments);
      const l = await openTimed(browser, `${service.url}/ui/`, s.api.key, count(ROWS, '===', shown));
      const filter = await timeAction(l.page, 'change', count(ROWS, '===', 1), () =>
        l.page
          .getByRole('search')
          .getByLabel('State')
          .selectOption('committed')
          .then(() => undefined),
      );
      let paging = Number.NaN;
      if (s.experiments > LIST_PAGE) {
        await l.page.getByRole('search').getByLabel('State').selectOption('');
        await l.page
          .locator(ROWS)
          .nth(shown - 1)
          .waitFor();
        const first = await l.page.locator(`${ROWS} a`).first().innerText();
        const next = await timeAction(
          l.page,
          'click',
          `document.querySelector(${JSON.stringify(`${ROWS} a`)})?.textContent !== ${JSON.stringify(first)}`,
          () => l.page.getByRole('button', { name: 'Next page' }).click(),
        );
        paging = next.ms;
      }
      await l.close();

      const r = await openTimed(
        browser,
        `${service.url}/ui/experiments/${s.runsExperiment}`,
        s.api.key,
        count(RUN_ROWS, '===', Math.min(s.runs, RUN_PAGE)),
      );
      const half = Math.ceil(s.runs / 2);
      // Variation 2's first page: as many rows, each of variation 2.
      const onlySecond = `${count(RUN_ROWS, '===', Math.min(s.runs - half, RUN_PAGE))} && [...document.querySelectorAll(${JSON.stringify(RUN_ROWS)})].every((tr) => tr.dataset.run.startsWith('2.'))`;
      const variation = await timeAction(r.page, 'change', onlySecond, () =>
        r.page
          .locator(VARIATION)
          .selectOption('2')
          .then(() => undefined),
      );
      await r.close();
      if (round === 0) continue;
      const lf = list.get(s.label)!;
      lf.rendered.push(l.renderedMs);
      lf.action.push(filter.ms);
      lf.interactive.push(filter.endMs);
      lf.paging.push(paging);
      const rf = runs.get(s.label)!;
      rf.rendered.push(r.renderedMs);
      rf.action.push(variation.ms);
      rf.interactive.push(variation.endMs);
    }
    log(`round ${round} done${round === 0 ? ' (warm-up)' : ''}`);
  }

  const row = (page: string, items: string, f: Figures) => [
    page,
    items,
    ms(median(f.rendered)),
    ms(median(f.action)),
    ms(median(f.interactive)),
    f.paging.length && !Number.isNaN(f.paging[0]) ? ms(median(f.paging)) : '—',
  ];
  const many = seeded[0]!;
  const base = seeded[1]!;
  const body = table(
    ['Page', 'Items', 'Rendered (ms)', 'Filter (ms)', 'Interactive (ms)', 'Next page (ms)'],
    [
      row('Experiments list', `${many.experiments} (${LIST_PAGE} shown)`, list.get('many')!),
      row('Experiments list', `${base.experiments}`, list.get('baseline')!),
      row('Run table', `${many.runs} runs (${RUN_PAGE} shown)`, runs.get('many')!),
      row('Run table', `${base.runs} runs`, runs.get('baseline')!),
    ],
  );
  const ratio = (a: Figures, b: Figures) => (median(a.interactive) / median(b.interactive)).toFixed(2);
  const report = (markdown: string) =>
    guard ? console.log(`\n${markdown}`) : publish('web-render', markdown);
  await report(
    [
      '## Web UI render',
      '',
      `\`node bench/web-render.ts\` (${new Date().toISOString().slice(0, 10)}; ${machine()})`,
      '',
      `Chromium, a fresh context (cold HTTP cache) per load, medians of ${o.rounds} rounds after a warm-up.`,
      'Rendered: navigation start → the first frame with every row shown (the run table shows 100 a page).',
      'Filter: the select’s change event → the first frame with the filtered rows (list: state committed, 1 row;',
      'run table: variation 2, the first page of half the runs). Interactive: navigation start → that filter frame, the filter chosen as soon as the rows showed.',
      'Next page: the click → the first frame of page 2.',
      '',
      body,
      '',
      `Many/baseline, interactive: list ${ratio(list.get('many')!, list.get('baseline')!)}×, run table ${ratio(runs.get('many')!, runs.get('baseline')!)}×;`,
      `rendered: run table ${(median(runs.get('many')!.rendered) / median(runs.get('baseline')!.rendered)).toFixed(2)}×.`,
    ].join('\n'),
  );
  if (guard)
    printGuard({
      name: 'web/run-table-1000-vs-10',
      ratio: median(runs.get('many')!.rendered) / median(runs.get('baseline')!.rendered),
      higherIsBetter: false,
      what: `experiment page's run table rendered: ${o.runs} runs ÷ ${o.baseline} runs`,
    });
} finally {
  await browser.close();
  await dispatcher.close();
  await service.stop();
}
