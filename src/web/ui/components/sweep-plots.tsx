// The sweep page's plots: the objective against trial number (uPlot, loaded with the first chart) and the
// space's parallel coordinates (SVG).
import type { Objective, Sweep } from '@assay/contract';
import { objectivePoints, trialRuns, type TrialRun } from '../sweep-trials.ts';
import { Chart, useWidth } from './chart-frame.tsx';
import { ParallelCoordinates } from './parallel-coordinates.tsx';

const LINES = [
  { label: 'finished', color: '#1f5fbf' },
  { label: 'stopped early', color: '#8c959f' },
  { label: 'best so far', color: '#1a7f37', joined: true, width: 2 },
];

/** The objective by trial (when the sweep has an objective) and the space's parallel coordinates. */
export function SweepPlots({ sweep, tableId }: { sweep: Sweep; tableId: string }) {
  const objective = sweep.declaration.objective;
  const trials = trialRuns(sweep);
  return (
    <>
      {objective && <ObjectiveChart objective={objective} trials={trials} />}
      <section aria-labelledby="sweep-space-title">
        <h2 id="sweep-space-title">The space</h2>
        <ParallelCoordinates
          trials={trials}
          space={sweep.declaration.space}
          objective={objective}
          describedBy={tableId}
        />
      </section>
    </>
  );
}

function ObjectiveChart({ objective, trials }: { objective: Objective; trials: TrialRun[] }) {
  const [ref, width] = useWidth<HTMLDivElement>();
  const points = objectivePoints(trials, objective.goal);
  return (
    <section aria-labelledby="sweep-objective-title">
      <h2 id="sweep-objective-title">
        {objective.metric} by trial <span className="muted">({objective.goal})</span>
      </h2>
      <div ref={ref} data-testid="objective-chart" data-points={points.trials.length}>
        {points.trials.length === 0 ? (
          <p className="hint">No trial has ended with a {objective.metric} yet.</p>
        ) : (
          width > 0 && (
            <Chart
              label={`${objective.metric} against trial number`}
              data={[points.trials, points.finished, points.stopped, points.bestSoFar]}
              lines={LINES}
              width={width}
              height={260}
              xLabel="trial"
              scatter={{ wholeX: true }}
            />
          )
        )}
      </div>
    </section>
  );
}
