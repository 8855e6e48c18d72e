// Where an Assay trial's seconds go, from its run's timestamps (bench/sweeps.ts).
import { median, ms, quantile, table } from '../support/report.ts';
import type { SweepOutcome, TrialTiming } from './assay-sweep.ts';

interface Phase {
  name: string;
  of: (t: TrialTiming, next: TrialTiming | undefined) => number;
  /** Which trials it is measured on. */
  on?: (t: TrialTiming) => boolean;
}

const stopped = (t: TrialTiming) => t.failureReason === 'stopped_early';
const completed = (t: TrialTiming) => t.state === 'succeeded';
// The first metrics line comes one epoch after training began.
const trainingBegan = (t: TrialTiming) => t.firstMetric - (Number.isNaN(t.epochMs) ? 0 : t.epochMs);

const PHASES: Phase[] = [
  { name: 'queueing and provisioning (run created → instance spawned)', of: (t) => t.spawned - t.created },
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
  {
    name: 'between trials at concurrency 1 (run ended → the next trial’s run created)',
    of: (t, next) => (next ? next.created - t.ended : Number.NaN),
  },
];

/** One row per phase: p50, p95 and its share of the sweep's wall time (summed over trials). */
export function phaseTable(label: string, outcome: SweepOutcome, concurrency: number): string {
  const trials = [...outcome.trials].sort((a, b) => a.trial - b.trial);
  const rows = PHASES.flatMap((phase) => {
    if (phase.name.startsWith('between') && concurrency !== 1) return [];
    const values = trials
      .map((t, i) => ((phase.on ?? (() => true))(t) ? phase.of(t, trials[i + 1]) : Number.NaN))
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
