import type { SweepRunCounts } from '@assay/client/browser';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useParams } from 'wouter';
import { runPath } from '../components/runs-table.tsx';
import { ErrorState, Loading, StateBadge } from '../components/status.tsx';
import { formatTime } from '../format.ts';
import { queryKeys } from '../query-keys.ts';
import { useClient } from '../session.tsx';

/** A sweep: its progress, polled every 2 s until every run has ended, its runs, cancel and compare. */
export function SweepPage() {
  const { id, sweepId } = useParams<{ id: string; sweepId: string }>();
  const client = useClient();
  const queryClient = useQueryClient();
  const sweep = useQuery({
    queryKey: queryKeys.sweep(id, sweepId),
    queryFn: () => client.sweeps.get(id, sweepId),
    refetchInterval: (query) => (query.state.data?.progress.done ? false : 2_000),
  });
  const cancel = useMutation({
    mutationFn: () => client.sweeps.cancel(id, sweepId),
    onSettled: () => void queryClient.invalidateQueries({ queryKey: queryKeys.experiment(id) }),
  });
  if (sweep.isPending) return <Loading what="the sweep" />;
  if (sweep.isError) return <ErrorState error={sweep.error} title="Could not load the sweep" />;
  const data = sweep.data;
  // Counted by the service from the runs' recorded states, as the table below shows them.
  const progress = data.progress;
  const experimentPath = `/experiments/${encodeURIComponent(id)}`;
  return (
    <article aria-labelledby="sweep-title">
      <p>
        <Link href={experimentPath}>← Experiment</Link>
      </p>
      <div className="page-title">
        <h1 id="sweep-title">Sweep</h1>
        <StateBadge state={progress.done ? 'done' : 'running'} />
      </div>
      <dl className="facts">
        <dt>Created</dt>
        <dd>{formatTime(data.created_at)}</dd>
        <dt>Concurrency</dt>
        <dd>{data.concurrency}</dd>
        <dt>Workflow</dt>
        <dd>
          {data.workflow_url ? (
            <a href={data.workflow_url} target="_blank" rel="noopener noreferrer">
              {data.workflow_id}
            </a>
          ) : (
            data.workflow_id
          )}
        </dd>
      </dl>
      <ProgressBar progress={progress} />
      <div className="actions">
        <Link className="button" href={`${experimentPath}/compare?sweep=${encodeURIComponent(data.id)}`}>
          Compare runs
        </Link>
        {!progress.done && (
          <button
            type="button"
            className="danger"
            onClick={() => cancel.mutate()}
            disabled={cancel.isPending}
          >
            Cancel sweep
          </button>
        )}
      </div>
      {cancel.isError && <ErrorState error={cancel.error} title="The sweep was not cancelled" />}
      <section aria-labelledby="sweep-runs-title">
        <h2 id="sweep-runs-title">Runs</h2>
        <div className="table-scroll">
          <table>
            <thead>
              <tr>
                <th scope="col">Run</th>
                <th scope="col">Variation</th>
                <th scope="col">State</th>
                <th scope="col">Failure</th>
              </tr>
            </thead>
            <tbody>
              {data.runs.map((run) => (
                <tr key={`${run.n}.${run.r}`} data-run={`${run.n}.${run.r}`}>
                  <td>
                    <Link href={runPath({ experiment_id: id, n: run.n, r: run.r })}>
                      {run.n}.{run.r}
                    </Link>
                  </td>
                  <td>{run.variation_name}</td>
                  <td>
                    <StateBadge state={run.state} />
                  </td>
                  <td>{run.failure_reason ?? ''}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </section>
    </article>
  );
}

const SEGMENTS = ['succeeded', 'failed', 'running', 'pending'] as const;

/** One bar split by state; the ended share is the progressbar's value, the counts are text beside it. */
function ProgressBar({ progress }: { progress: SweepRunCounts }) {
  const ended = progress.succeeded + progress.failed;
  const reasons = Object.entries(progress.failed_by_reason).map(([reason, n]) => `${reason}: ${n}`);
  const share = (n: number) => (progress.total ? (100 * n) / progress.total : 0);
  return (
    <section aria-labelledby="sweep-progress-title">
      <h2 id="sweep-progress-title">Progress</h2>
      <div
        className="sweep-progress"
        role="progressbar"
        aria-labelledby="sweep-progress-title"
        aria-valuemin={0}
        aria-valuemax={progress.total}
        aria-valuenow={ended}
        aria-valuetext={`${ended} of ${progress.total} runs ended`}
      >
        {SEGMENTS.map((state) =>
          progress[state] > 0 ? (
            <span
              key={state}
              className={`segment state-${state}`}
              style={{ width: `${share(progress[state])}%` }}
            />
          ) : null,
        )}
      </div>
      <p className="run-counts" data-testid="sweep-counts" aria-live="polite">
        {SEGMENTS.map((state) => `${progress[state]} ${state}`).join(' · ')} · {progress.total} in all
        {progress.done ? ' · done' : ''}
      </p>
      {reasons.length > 0 && <p data-testid="sweep-failures">Failed by reason: {reasons.join(' · ')}</p>}
    </section>
  );
}
