import type { SweepSummary } from '@assay/contract';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { Link } from 'wouter';
import { formatTime } from '../format.ts';
import { formatValue } from '../param-format.ts';
import { queryKeys } from '../query-keys.ts';
import { useClient } from '../session.tsx';
import { endedRuns } from '../sweep-trials.ts';
import { useCursorPages } from './pager.tsx';
import { QueryView, TableScroll } from './query-view.tsx';
import { Empty, StateBadge } from './status.tsx';

/** Where a sweep's page is. */
export const sweepPath = (experimentId: string, sweepId: string) =>
  `/experiments/${encodeURIComponent(experimentId)}/sweeps/${encodeURIComponent(sweepId)}`;

/** The experiment's sweeps, newest first as the service lists them; read again while one is under way. */
export function SweepList({ experimentId }: { experimentId: string }) {
  const client = useClient();
  const pages = useCursorPages();
  const sweeps = useQuery({
    queryKey: queryKeys.sweeps(experimentId, pages.cursor),
    queryFn: () => client.sweeps.list(experimentId, { cursor: pages.cursor }),
    refetchInterval: (query) => (query.state.data?.items.some((s) => !s.progress.done) ? 5_000 : false),
    placeholderData: keepPreviousData,
  });
  const paged = pages.page > 1 || Boolean(sweeps.data?.next_cursor);
  return (
    <section aria-labelledby="sweeps-title">
      <h2 id="sweeps-title">Sweeps</h2>
      <QueryView
        query={sweeps}
        what="the sweeps"
        errorTitle="Could not load the sweeps"
        isEmpty={(data) => data.items.length === 0 && pages.page === 1}
        empty={
          <Empty command={`assay sweeps list ${experimentId}`}>
            No sweeps. A sweep is made on a draft (its page has the form) and commits it.
          </Empty>
        }
        pager={paged ? { pages, nextCursor: sweeps.data?.next_cursor } : undefined}
      >
        {(data, stale) => <SweepTable sweeps={data.items} stale={stale} />}
      </QueryView>
    </section>
  );
}

function SweepTable({ sweeps, stale }: { sweeps: SweepSummary[]; stale: boolean }) {
  return (
    <TableScroll stale={stale}>
      <table className="sweeps">
        <thead>
          <tr>
            <th scope="col">Sweep</th>
            <th scope="col">Strategy</th>
            <th scope="col">Progress</th>
            <th scope="col">Best</th>
            <th scope="col">Created</th>
          </tr>
        </thead>
        <tbody>
          {sweeps.map((s) => (
            <SweepRow key={s.id} sweep={s} />
          ))}
        </tbody>
      </table>
    </TableScroll>
  );
}

function SweepRow({ sweep }: { sweep: SweepSummary }) {
  const { declaration: d, progress: p } = sweep;
  const name = `${d.name_prefix ?? 'sweep'} ${sweep.id.slice(0, 8)}`;
  const stoppedEarly = p.stopped_early > 0 ? `, ${p.stopped_early} stopped early` : '';
  return (
    <tr data-sweep={sweep.id}>
      <td>
        <Link href={sweepPath(sweep.experiment_id, sweep.id)}>{name}</Link>
      </td>
      <td>{d.strategy}</td>
      <td data-testid="sweep-list-progress">
        {endedRuns(p)} of {p.total} ended{stoppedEarly}
        {p.running > 0 && `, ${p.running} running`} {p.done && <StateBadge state="done" />}
      </td>
      <td className="number">
        {sweep.best_value === null ? (
          '—'
        ) : (
          <>
            {formatValue(sweep.best_value)}
            {d.objective && (
              <span className="muted">
                {' '}
                {d.objective.metric} ({d.objective.goal})
              </span>
            )}
          </>
        )}
      </td>
      <td>{formatTime(sweep.created_at)}</td>
    </tr>
  );
}
