import type { RunData } from '@assay/client/browser';
import { useQuery } from '@tanstack/react-query';
import { Link, useParams } from 'wouter';
import { RunAssets } from '../components/run-assets.tsx';
import { RunMetricCharts } from '../components/run-metric-charts.tsx';
import { runPath } from '../components/runs-table.tsx';
import { Empty, ErrorState, Loading, RunStateBadge } from '../components/status.tsx';
import { formatDuration, formatQueuePlace, formatTime } from '../format.ts';
import { queryKeys } from '../query-keys.ts';
import { runsRefetchInterval } from '../run-polling.ts';
import { useClient } from '../session.tsx';

/**
 * One run: its timeline, metric charts, failure, managed-run facts, recovery chain and environment snapshot,
 * kept live.
 */
export function RunPage() {
  const params = useParams<{ id: string; n: string; r: string }>();
  const [id, n, r] = [params.id, Number(params.n), Number(params.r)];
  const client = useClient();
  // The variation's runs: this one, and the recovery chain around it (recovers_run_id names a run by id).
  const runs = useQuery({
    queryKey: queryKeys.runs(id, n),
    queryFn: () => client.runs.list(id, n),
    refetchInterval: (query) => runsRefetchInterval(query.state.data),
  });
  const back = (
    <p>
      <Link href={`/experiments/${encodeURIComponent(id)}`}>← Experiment</Link>
    </p>
  );
  if (runs.isPending) return <Loading what="the run" />;
  if (runs.isError) return <ErrorState error={runs.error} title="Could not load the run" />;
  const run = runs.data.find((x) => x.r === r);
  if (!run)
    return (
      <>
        {back}
        <Empty command={`assay runs list ${id} ${n}`}>
          Variation {n} has no run {r}. Its runs are listed on the experiment&apos;s page.
        </Empty>
      </>
    );
  const recovers = runs.data.find((x) => x.id === run.recovers_run_id);
  const recoveredBy = runs.data.filter((x) => x.recovers_run_id === run.id);
  return (
    <article aria-labelledby="run-title">
      {back}
      <div className="page-title">
        <h1 id="run-title">
          Run {n}.{r}
        </h1>
        <RunStateBadge run={run} />
        {run.managed && <span className="badge managed">managed</span>}
        {run.queue && (
          <span className="badge queued">
            queued {run.queue.position}/{run.queue.waiting}
          </span>
        )}
      </div>
      {run.queue && (
        <p className="queue-place" role="status">
          Queued: {formatQueuePlace(run.queue)}, since{' '}
          <time dateTime={run.queue.since}>{formatTime(run.queue.since)}</time>. It starts when the machine
          has room; position 1 starts next.
        </p>
      )}
      {run.failure_reason && (
        <p className="failure" role="status">
          <code>{run.failure_reason}</code> {run.failure_message}
        </p>
      )}
      <h2>Timeline</h2>
      <Timeline run={run} />
      <h2>Metrics</h2>
      <RunMetricCharts run={run} />
      <h2>Managed run</h2>
      <dl className="facts">
        <dt>Workflow</dt>
        <dd>
          {run.workflow_url ? (
            <a href={run.workflow_url} target="_blank" rel="noopener noreferrer">
              {run.workflow_id ?? 'Temporal UI'}
            </a>
          ) : (
            (run.workflow_id ?? '—')
          )}
        </dd>
        <dt>Recovers</dt>
        <dd>{recovers ? <Link href={runPath(recovers)}>{`run ${recovers.n}.${recovers.r}`}</Link> : '—'}</dd>
        <dt>Recovered by</dt>
        <dd>
          {recoveredBy.length === 0
            ? '—'
            : recoveredBy.map((x) => <Link key={x.id} href={runPath(x)}>{`run ${x.n}.${x.r} `}</Link>)}
        </dd>
        <dt>Priority</dt>
        <dd>{run.priority}</dd>
        <dt>Cancel requested</dt>
        <dd>{run.cancel_requested ? 'yes' : 'no'}</dd>
      </dl>
      <h2>Assets and checkpoints</h2>
      <RunAssets run={{ experimentId: id, n, r }} />
      <h2>Environment snapshot</h2>
      <JsonBlock value={run.environment} none="The runner has not reported its environment yet." />
      <h2>Instance</h2>
      <JsonBlock value={run.instance} none="No instance: a self-managed run, or not provisioned yet." />
    </article>
  );
}

function Timeline({ run }: { run: RunData }) {
  const steps: Array<[string, string | null]> = [
    ['Created', run.created_at],
    ['Config read', run.config_read_at],
    ['Started', run.started_at],
    ['Last heartbeat', run.last_heartbeat_at],
    ['Ended', run.ended_at],
  ];
  return (
    <ol className="timeline">
      {steps.map(([label, at]) => (
        <li key={label} className={at ? 'done' : 'todo'}>
          <span className="timeline-label">{label}</span>{' '}
          <time dateTime={at ?? undefined}>{formatTime(at)}</time>
        </li>
      ))}
      <li className="muted">Duration: {formatDuration(run.started_at, run.ended_at)}</li>
    </ol>
  );
}

function JsonBlock({ value, none }: { value: Record<string, unknown> | null; none: string }) {
  if (!value || Object.keys(value).length === 0) return <p className="muted">{none}</p>;
  return <pre className="code">{JSON.stringify(value, null, 2)}</pre>;
}
