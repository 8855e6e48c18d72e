import type { Sweep } from '@assay/contract';
import { Link } from 'wouter';
import { formatValue } from '../param-format.ts';
import { OUTCOME_LABEL, trialRuns } from '../sweep-trials.ts';
import { TableScroll } from './query-view.tsx';
import { runPath } from './runs-table.tsx';
import { StateBadge } from './status.tsx';

/** The keys a sweep varies: its declared space's, or every key its runs' points set. */
export function paramKeys(sweep: Sweep): string[] {
  const space = sweep.declaration.space;
  return space ? Object.keys(space) : [...new Set(sweep.runs.flatMap((r) => Object.keys(r.params)))];
}

/**
 * Every run of the sweep: its trial, the point it tried (a column per key), the objective's last value and
 * the step it reached (when the sweep has an objective), and how it ended. The plots' text alternative: it
 * says what they draw.
 */
export function SweepTrialsTable({ sweep, captionId }: { sweep: Sweep; captionId: string }) {
  const keys = paramKeys(sweep);
  const metric = sweep.declaration.objective?.metric;
  const best = sweep.best;
  const isBest = (run: Sweep['runs'][number]) => best !== null && best.n === run.n && best.r === run.r;
  return (
    <TableScroll>
      <table className="trials">
        <caption id={captionId}>
          {sweep.runs.length} runs{metric ? `, with the last ${metric} each logged` : ''}
          {best ? '; ★ marks the best' : ''}
        </caption>
        <thead>
          <tr>
            <th scope="col">Trial</th>
            <th scope="col">Run</th>
            {keys.map((key) => (
              <th key={key} scope="col" className="col-config">
                {key}
              </th>
            ))}
            {metric && (
              <>
                <th scope="col">{metric}</th>
                <th scope="col">Step</th>
              </>
            )}
            <th scope="col">State</th>
          </tr>
        </thead>
        <tbody>
          {trialRuns(sweep).map(({ run, trial, outcome }) => {
            return (
              <tr
                key={`${run.n}.${run.r}`}
                data-run={`${run.n}.${run.r}`}
                data-trial={trial}
                className={isBest(run) ? 'best' : undefined}
              >
                <td className="nowrap">
                  {trial}
                  {isBest(run) && <span title="the best so far"> ★</span>}
                </td>
                <td className="nowrap">
                  <Link href={runPath({ experiment_id: sweep.experiment_id, n: run.n, r: run.r })}>
                    {run.n}.{run.r}
                  </Link>
                </td>
                {keys.map((key) => (
                  <td key={key} className="col-config">
                    {formatValue(run.params[key])}
                  </td>
                ))}
                {metric && (
                  <>
                    <td className="number">{formatValue(run.objective)}</td>
                    <td className="number">{run.step ?? '—'}</td>
                  </>
                )}
                <td>
                  <StateBadge state={outcome} label={OUTCOME_LABEL[outcome]} />
                  {outcome === 'failed' && run.failure_reason && (
                    <code className="muted"> {run.failure_reason}</code>
                  )}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </TableScroll>
  );
}
