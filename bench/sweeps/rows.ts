// The rows and ratio lines of bench/sweeps.ts: one row per setup and search, medians over the seeds.
import { median, quantile, table } from '../support/report.ts';

export interface Row {
  setup: string;
  /** random, tpe, or list (bench-drawn points, no search). */
  sampler: string;
  stopping: boolean;
  concurrency: number;
  wallS: number[];
  best: number[];
  trialEpochs: number[];
  stopped: number[];
  /** (b): SIGTERM → the trial's process exited, per stopped trial. */
  stopS: number[];
  /** (b): process spawned → training began, per trial. */
  startS: number[];
  /** Why the setup has no figures (e.g. the service refused the sweep). */
  error?: string;
}

const perSeed = (xs: number[], digits: number) =>
  xs.length > 1 ? ` (${xs.map((x) => x.toFixed(digits)).join(', ')})` : '';
const searchOf = (r: Row) =>
  `${r.sampler === 'tpe' ? 'TPE' : r.sampler}${r.stopping ? ' + successive halving' : ', no early stopping'}`;

/** The main table: wall time, best val_acc and trial-epochs used, median over seeds. */
export function resultsTable(rows: Row[], mid: (xs: number[]) => number, trials: number, epochs: number) {
  return table(
    [
      'Setup',
      'Search',
      'Wall time',
      'Best val_acc',
      `Trial-epochs (of ${trials} × ${epochs})`,
      'Stopped early',
    ],
    rows.map((r) =>
      r.wallS.length === 0
        ? [r.setup, searchOf(r), `not run: ${r.error ?? 'no result'}`, '—', '—', '—']
        : [
            r.setup,
            searchOf(r),
            `${mid(r.wallS).toFixed(1)} s${perSeed(r.wallS, 1)}`,
            `${mid(r.best).toFixed(4)}${perSeed(r.best, 4)}`,
            `${mid(r.trialEpochs).toFixed(0)} (${((100 * mid(r.trialEpochs)) / (trials * epochs)).toFixed(0)} %)`,
            mid(r.stopped).toFixed(0),
          ],
    ),
  );
}

const find = (rows: Row[], setup: string, sampler: string, stopping: boolean, concurrency = 1) =>
  rows.find(
    (r) =>
      r.setup.startsWith(setup) &&
      r.sampler === sampler &&
      r.stopping === stopping &&
      r.concurrency === concurrency &&
      r.wallS.length > 0,
  );
const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}×`;
const points = (a: number, b: number) =>
  `${100 * (a - b) >= 0 ? '+' : ''}${(100 * (a - b)).toFixed(2)} points`;

/** The ratio lines: orchestration cost, search quality, where (b)'s trial seconds go. */
export function ratioLines(rows: Row[]): string[] {
  const lines: string[] = [];
  for (const sampler of ['random', 'tpe'])
    for (const stopping of sampler === 'tpe' ? [true] : [false, true]) {
      const a = find(rows, '(a)', sampler, stopping);
      const b = find(rows, '(b)', sampler, stopping);
      const c1 = find(rows, '(c)', sampler, stopping, 1);
      const c2 = find(rows, '(c)', sampler, stopping, 2);
      const name = searchOf({ sampler, stopping } as Row);
      if (a && b)
        lines.push(
          `- ${name}: (b)/(a) wall time ${ratio(median(b.wallS), median(a.wallS))} (a process per trial).`,
        );
      if (b && c1) {
        const r = median(c1.wallS) / median(b.wallS);
        const d = median(c1.best) - median(b.best);
        lines.push(
          `- **${name}: (c, concurrency 1)/(b) wall time ${ratio(median(c1.wallS), median(b.wallS))} (goal ≤ 1.25×: ${r <= 1.25 ? 'met' : 'not met'}), best ${points(median(c1.best), median(b.best))} (goal within 1 point: ${Math.abs(d) <= 0.01 ? 'met' : 'not met'}).**`,
        );
      }
      if (c1 && c2)
        lines.push(
          `- ${name}: Assay at concurrency 2 / 1 wall time ${ratio(median(c2.wallS), median(c1.wallS))}.`,
        );
      const d1 = find(rows, '(d)', sampler, stopping, 1);
      if (c1 && d1)
        lines.push(
          `- ${name}: Assay at concurrency 1, the SDK's script / the metrics file's: wall time ${ratio(median(d1.wallS), median(c1.wallS))}, trial-epochs ${median(d1.trialEpochs)} vs ${median(c1.trialEpochs)}, best ${median(d1.best).toFixed(4)} vs ${median(c1.best).toFixed(4)}.`,
        );
    }
  for (const setup of ['(a)', '(b)', '(c)', '(d)']) {
    const full = find(rows, setup, 'random', false) ?? find(rows, setup, 'list', false);
    const asha = find(rows, setup, 'random', true);
    const tpe = find(rows, setup, 'tpe', true);
    if (full && asha) {
      const share = median(asha.trialEpochs) / median(full.trialEpochs);
      const d = median(asha.best) - median(full.best);
      lines.push(
        `- ${setup} early stopping: random + successive halving used ${(100 * share).toFixed(0)} % of random's trial-epochs, best ${points(median(asha.best), median(full.best))} (goal ≤ 25 % within 1 point: ${share <= 0.25 && d >= -0.01 ? 'met' : 'not met'}).`,
      );
    }
    if (asha && tpe)
      lines.push(
        `- ${setup} TPE + successive halving best vs random + successive halving, median of ${tpe.best.length} seed(s): ${median(tpe.best).toFixed(4)} vs ${median(asha.best).toFixed(4)} (goal ≥: ${median(tpe.best) >= median(asha.best) ? 'met' : 'not met'}).`,
      );
  }
  const b = rows.filter((r) => r.setup.startsWith('(b)'));
  const starts = b.flatMap((r) => r.startS);
  const stops = b.flatMap((r) => r.stopS);
  if (starts.length > 0)
    lines.push(
      `- (b) per trial: process start (spawned → training began: Python, scikit-learn, data) p50 ${(1000 * quantile(starts, 0.5)).toFixed(0)} ms; a stop (SIGTERM → exited) p50 ${(1000 * quantile(stops, 0.5)).toFixed(0)} ms, p95 ${(1000 * quantile(stops, 0.95)).toFixed(0)} ms.`,
    );
  return lines;
}
