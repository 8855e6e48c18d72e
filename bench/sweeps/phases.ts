// Where an Assay trial's seconds go, from its run's timestamps (bench/sweeps.ts).
import { median, ms, quantile, table } from '../support/report.ts';
import type { SweepOutcome, TrialTiming } from './assay-sweep.ts';

interface Phase {
  name: string;
  of: (t: TrialTiming, previous: TrialTiming | undefined) => number;
  /** Which trials it is measured on. */
  on?: (t: TrialTiming) => boolean;
  /** Only meaningful when trials run one after another. */
  concurrencyOne?: boolean;
}

const stopped = (t: TrialTiming) => t.failureReason === 'stopped_early';
const completed = (t: TrialTiming) => t.state === 'succeeded';
// The first metrics line comes one epoch after training began.
const trainingBegan = (t: TrialTiming) => t.firstMetric - (Number.isNaN(t.epochMs) ? 0 : t.epochMs);

// At concurrency 1 a trial can start only once the previous one has ended (a list sweep creates every run up
// front, a searching sweep each when its turn comes), so its wait is counted from the later of the two.
const ready = (t: TrialTiming, previous: TrialTiming | undefined) =>
  previous ? Math.max(t.created, previous.ended) : t.created;

const PHASES: Phase[] = [
  {
    name: 'the sweep’s turn at concurrency 1: suggestion, variation, run (previous trial ended → run created)',
    of: (t, previous) => (previous && t.created >= previous.ended ? t.created - previous.ended : Number.NaN),
    concurrencyOne: true,
  },
  {
    name: 'provisioning (run created, or the previous trial ended when later → instance spawned)',
    of: (t, previous) => t.spawned - ready(t, previous),
  },
  { name: 'runner start-up (instance spawned → run started)', of: (t) => t.started - t.spawned },
  {
    name: 'program start-up: Python, scikit-learn, data (run started → training began)',
    of: (t) => trainingBegan(t) - t.started,
  },
  { name: 'training (training began → last metrics line)', of: (t) => t.lastMetric - trainingBegan(t) },
  {
    name: 'end of a full trial (last metrics line → run ended)',
    of: (t) => t.ended - t.lastMetric,
    on: completed,
  },
  {
    name: 'stop round trip of a stopped trial (last metrics line → run ended stopped_early)',
    of: (t) => t.ended - t.lastMetric,
    on: stopped,
  },
];

/** One row per phase: p50, p95 and its share of the sweep's wall time (summed over trials). */
export function phaseTable(label: string, outcome: SweepOutcome, concurrency: number): string {
  const trials = [...outcome.trials].sort((a, b) => a.trial - b.trial);
  const rows = PHASES.flatMap((phase) => {
    if (phase.concurrencyOne && concurrency !== 1) return [];
    // The previous trial is only the one this trial waited for at concurrency 1.
    const previous = (i: number) => (concurrency === 1 ? trials[i - 1] : undefined);
    const values = trials
      .map((t, i) => ((phase.on ?? (() => true))(t) ? phase.of(t, previous(i)) : Number.NaN))
      .filter((v) => Number.isFinite(v));
    if (values.length === 0) return [[phase.name, '—', '—', '—', '0']];
    const sum = values.reduce((s, v) => s + v, 0);
    return [
      [
        phase.name,
        `${ms(median(values))} ms`,
        `${ms(quantile(values, 0.95))} ms`,
        `${((100 * sum) / concurrency / outcome.wallMs).toFixed(0)} %`,
        String(values.length),
      ],
    ];
  });
  return [`${label}:`, '', table(['Phase', 'p50', 'p95', 'Share of wall time', 'Trials'], rows)].join('\n');
}
