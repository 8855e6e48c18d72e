import type { Goal, SweepRun } from '@assay/contract';
import { formatValue } from '../param-format.ts';
import { sweepAxes, viridis, type Axis } from '../parallel-axes.ts';
import { OUTCOME_LABEL, type TrialRun } from '../sweep-trials.ts';
import { useWidth } from './chart-frame.tsx';

const HEIGHT = 300;
const MARGIN = { top: 36, bottom: 28, side: 70 };
/** Below this much room per axis the plot scrolls sideways rather than squeeze its labels together. */
const MIN_AXIS_GAP = 110;

export interface ParallelCoordinatesProps {
  trials: readonly TrialRun[];
  space: Parameters<typeof sweepAxes>[0];
  objective: { metric: string; goal: Goal } | null;
  /** The id of what says the same in text (the trials table), for the plot's description. */
  describedBy: string;
}

/**
 * The space as parallel axes, one per key and the objective last; each trial a line through its values,
 * coloured by its objective (the best dark, the worst light; grey before it has one). Drawn as SVG: a few
 * hundred lines need no chart library.
 */
export function ParallelCoordinates({ trials, space, objective, describedBy }: ParallelCoordinatesProps) {
  const [ref, available] = useWidth<HTMLDivElement>();
  // A retried run's trial is drawn by the run that took over.
  const shown = trials.filter((t) => t.outcome !== 'retried');
  const axes = sweepAxes(
    space,
    shown.map((t) => t.run),
    objective?.metric,
  );
  const objectiveAxis = axes.find((a) => a.objective);
  const width = Math.max(available, 2 * MARGIN.side + (axes.length - 1) * MIN_AXIS_GAP);
  const plotWidth = width - 2 * MARGIN.side;
  const x = (i: number) =>
    MARGIN.side + (axes.length === 1 ? plotWidth / 2 : (i * plotWidth) / (axes.length - 1));
  const y = (at: number) => MARGIN.top + (1 - at) * (HEIGHT - MARGIN.top - MARGIN.bottom);
  // 0 the best, 1 the worst of the values seen.
  const badness = (run: SweepRun) => {
    const at = objectiveAxis?.position(run.objective) ?? null;
    if (at === null) return null;
    return objective?.goal === 'maximize' ? 1 - at : at;
  };
  // The best drawn last, on top of the others.
  const lines = shown
    .map((trial) => ({ trial, bad: badness(trial.run) }))
    .sort((a, b) => (b.bad ?? 2) - (a.bad ?? 2));
  const label = `Parallel coordinates of ${shown.length} trials over ${axes.length} axes`;
  return (
    <div
      ref={ref}
      className="parallel-coordinates"
      data-lines={lines.length}
      data-axes={axes.map((a) => a.label).join('|')}
    >
      {available > 0 && axes.length > 0 && (
        <div className="pc-scroll">
          <svg width={width} height={HEIGHT} role="img" aria-label={label} aria-describedby={describedBy}>
            {lines.map(({ trial, bad }) => (
              <TrialLine
                key={`${trial.run.n}.${trial.run.r}`}
                trial={trial}
                axes={axes}
                x={x}
                y={y}
                bad={bad}
              />
            ))}
            {axes.map((axis, i) => (
              <AxisLine key={`${axis.objective}-${axis.key}`} axis={axis} x={x(i)} y={y} />
            ))}
          </svg>
        </div>
      )}
      {objective && (
        <p className="hint legend-scale">
          <span className="scale-swatch" aria-hidden="true" /> colour by {objective.metric}: dark the best (
          {objective.goal}), light the worst, grey not yet logged; dashed: stopped early.
        </p>
      )}
    </div>
  );
}

function TrialLine(props: {
  trial: TrialRun;
  axes: Axis[];
  x: (i: number) => number;
  y: (at: number) => number;
  bad: number | null;
}) {
  const { trial, axes, x, y, bad } = props;
  const { run, outcome } = trial;
  const points: string[] = [];
  axes.forEach((axis, i) => {
    const at = axis.position(axis.read(run));
    if (at !== null) points.push(`${x(i).toFixed(1)},${y(at).toFixed(1)}`);
  });
  const values = axes.map((a) => `${a.label} ${formatValue(a.read(run))}`).join(', ');
  return (
    <polyline
      className="trial-line"
      data-trial={trial.trial}
      points={points.join(' ')}
      fill="none"
      stroke={bad === null ? '#9aa3ad' : viridis(bad * 0.85)}
      strokeWidth={bad === null ? 1 : 1.8}
      strokeOpacity={0.85}
      strokeDasharray={outcome === 'stopped_early' ? '5 3' : undefined}
    >
      <title>{`trial ${trial.trial} (${OUTCOME_LABEL[outcome]}): ${values}`}</title>
    </polyline>
  );
}

function AxisLine({ axis, x, y }: { axis: Axis; x: number; y: (at: number) => number }) {
  return (
    <g className="pc-axis" data-kind={axis.kind}>
      <line x1={x} x2={x} y1={y(0)} y2={y(1)} stroke="#1b1f24" strokeWidth={1} />
      <text x={x} y={MARGIN.top - 18} textAnchor="middle" className="pc-axis-label">
        {axis.label.length > 18 ? `…${axis.label.slice(-17)}` : axis.label}
        <title>{`${axis.label} (${axis.kind === 'log' ? 'log scale' : axis.kind})`}</title>
      </text>
      {axis.ticks.map((tick) => (
        <g key={`${tick.at}-${tick.label}`}>
          <line x1={x - 4} x2={x} y1={y(tick.at)} y2={y(tick.at)} stroke="#1b1f24" />
          <text x={x - 6} y={y(tick.at)} dy="0.32em" textAnchor="end" className="pc-tick">
            {tick.label.length > 10 ? `${tick.label.slice(0, 9)}…` : tick.label}
          </text>
        </g>
      ))}
    </g>
  );
}
