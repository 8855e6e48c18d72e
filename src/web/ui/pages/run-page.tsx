import type { RunData, VariationData } from '@assay/client/browser';
import { isTerminalRunState } from '@assay/contract/enums';
import { useQuery } from '@tanstack/react-query';
import { Link, useParams } from 'wouter';
import { LogPane } from '../components/log-pane.tsx';
import { RunAssets } from '../components/run-assets.tsx';
import { RunLabels } from '../components/run-labels.tsx';
import { RunMetricCharts } from '../components/run-metric-charts.tsx';
import { runPath } from '../components/runs-table.tsx';
import { Empty, ErrorState, Loading, RunStateBadge } from '../components/status.tsx';
import { formatDuration, formatQueuePlace, formatTime } from '../format.ts';
import { queryKeys } from '../query-keys.ts';
import { runsRefetchInterval } from '../run-polling.ts';
import { useClient } from '../session.tsx';
import { useRunObjective } from '../sweep-objective.ts';

/**
 * One run: its labels, config, timeline, console log, metric charts, failure, managed-run facts, recovery
 * chain and environment snapshot, kept live.
 */
export function RunPage() {
  const params = useParams<{ id: string; n: string; r: string }>();
  const [id, n, r] = [params.id, Number(params.n), Number(params.r)];
  const client = useClient();
  // The variation's runs, archived ones too: this one, and the recovery chain around it (recovers_run_id
  // names a run by id).
  const runs = useQuery({
    queryKey: queryKeys.runList(id, n, { archived: true }),
    queryFn: () => client.runs.list(id, n, { archived: true }),
    refetchInterval: (query) => runsRefetchInterval(query.state.data),
  });
  const variation = useQuery({
    queryKey: queryKeys.variation(id, n),
    queryFn: () => client.variations.get(id, n),
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
          {run.name && <span className="run-name"> · {run.name}</span>}
        </h1>
        <RunStateBadge run={run} />
        {run.managed && <span className="badge managed">managed</span>}
        {run.archived_at && <span className="badge archived">archived</span>}
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
      <RunLabels run={run} />
      <h2>Variation</h2>
      <VariationConfig n={n} variation={variation} />
      <h2>Timeline</h2>
      <Timeline run={run} />
      <LogPane run={run} />
      <RunMetrics run={run} />
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
      <InstanceFacts run={run} />
    </article>
  );
}

/** The charts, the sweep's objective first when the run is a sweep's. */
function RunMetrics({ run }: { run: RunData }) {
  const objective = useRunObjective(useClient(), run);
  return <RunMetricCharts run={run} objective={objective ?? null} />;
}

/** Lines of a config shown open on the run page; a longer one starts collapsed. */
const CONFIG_OPEN_UP_TO_LINES = 15;

/** The variation the run runs: its name and its config as the runner reads it. */
function VariationConfig({
  n,
  variation,
}: {
  n: number;
  variation: { data?: VariationData; isError: boolean; error: unknown };
}) {
  if (variation.isError) return <ErrorState error={variation.error} title="Could not load the variation" />;
  if (!variation.data) return <Loading what="the variation" />;
  const { name, config_json: config } = variation.data;
  const text = JSON.stringify(config, null, 2);
  // A short config is open; a long one would push the log and the charts far down, so it starts closed.
  const open = text.split('\n').length <= CONFIG_OPEN_UP_TO_LINES;
  return (
    <>
      <p className="variation-name">
        Variation {n}
        {name && (
          <>
            {' · '}
            <strong>{name}</strong>
          </>
        )}
      </p>
      <details className="config" open={open}>
        <summary>Config</summary>
        {Object.keys(config).length === 0 ? (
          <p className="muted">An empty config.</p>
        ) : (
          <pre className="code">{text}</pre>
        )}
      </details>
    </>
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

/** Instance states that say the instance is still there; once the run has ended, it is not. */
const LIVE_INSTANCE_STATES = ['pending', 'provisioning', 'starting', 'running', 'ready', 'allocated'];

/**
 * The instance a managed run was provisioned on. The state recorded is the one at provisioning: once the run
 * has ended, an instance last seen live is shown as ended with the run (its end reaps it).
 */
function InstanceFacts({ run }: { run: RunData }) {
  const instance = run.instance;
  if (!instance || Object.keys(instance).length === 0)
    return <p className="muted">No instance: a self-managed run, or not provisioned yet.</p>;
  const recorded = typeof instance.state === 'string' ? instance.state : undefined;
  const ended = isTerminalRunState(run.state) && (!recorded || LIVE_INSTANCE_STATES.includes(recorded));
  const { provider, instance_id: instanceId, state: _state, ...rest } = instance;
  return (
    <>
      <dl className="facts instance-facts">
        <dt>Provider</dt>
        <dd>{typeof provider === 'string' ? provider : '—'}</dd>
        <dt>Instance</dt>
        <dd>
          <code>{typeof instanceId === 'string' ? instanceId : '—'}</code>
        </dd>
        <dt>State</dt>
        <dd data-testid="instance-state">
          {ended ? (
            <>
              <span className="badge state-ended">ended</span>{' '}
              <span className="muted">
                with the run{run.ended_at && <> at {formatTime(run.ended_at)}</>}
                {recorded && ` (last recorded: ${recorded})`}
              </span>
            </>
          ) : (
            <span className={`badge state-${recorded ?? 'unknown'}`}>{recorded ?? 'unknown'}</span>
          )}
        </dd>
      </dl>
      {Object.keys(rest).length > 0 && <JsonBlock value={rest} none="" />}
    </>
  );
}

function JsonBlock({ value, none }: { value: Record<string, unknown> | null; none: string }) {
  if (!value || Object.keys(value).length === 0) return <p className="muted">{none}</p>;
  return <pre className="code">{JSON.stringify(value, null, 2)}</pre>;
}
