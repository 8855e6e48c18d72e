import type { Sweep, SweepBest } from '@assay/contract';
import { Fragment } from 'react';
import { Link } from 'wouter';
import { formatValue } from '../param-format.ts';
import { runPath } from './runs-table.tsx';

/** The best finished trial so far: its value, the point it tried and a link to its run. */
export function SweepBestTrial({ sweep, best }: { sweep: Sweep; best: SweepBest }) {
  const objective = sweep.declaration.objective;
  const run = `${best.n}.${best.r}`;
  return (
    <section aria-labelledby="sweep-best-title" className="card sweep-best" data-testid="sweep-best">
      <h2 id="sweep-best-title">Best trial so far</h2>
      <p className="best-value">
        <span className="muted">{objective?.metric ?? 'objective'}</span>{' '}
        <strong>{formatValue(best.value)}</strong>
        {objective && <span className="muted"> ({objective.goal})</span>}
        {' · '}
        {best.trial !== null && <>trial {best.trial}, </>}
        run <Link href={runPath({ experiment_id: sweep.experiment_id, n: best.n, r: best.r })}>{run}</Link>
      </p>
      <dl className="facts">
        {Object.entries(best.params).map(([key, value]) => (
          <Fragment key={key}>
            <dt>{key}</dt>
            <dd>
              <code>{formatValue(value)}</code>
            </dd>
          </Fragment>
        ))}
      </dl>
    </section>
  );
}
