import type { EarlyStopping, Sweep } from '@assay/contract';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useParams } from 'wouter';
import { SweepBestTrial } from '../components/sweep-best.tsx';
import { SweepPlots } from '../components/sweep-plots.tsx';
import { SweepProgressBar } from '../components/sweep-progress.tsx';
import { SweepTrialsTable } from '../components/sweep-trials-table.tsx';
import { ErrorState, Loading, StateBadge } from '../components/status.tsx';
import { formatTime } from '../format.ts';
import { queryKeys } from '../query-keys.ts';
import { useClient } from '../session.tsx';

const TRIALS_CAPTION = 'sweep-trials-caption';

/** A sweep: its progress, polled every 2 s until every run has ended, the best trial, plots, trials, cancel. */
export function SweepPage() {
  const { id, sweepId } = useParams<{ id: string; sweepId: string }>();
  const client = useClient();
  const sweep = useQuery({
    queryKey: queryKeys.sweep(id, sweepId),
    queryFn: () => client.sweeps.get(id, sweepId),
    refetchInterval: (query) => (query.state.data?.progress.done ? false : 2_000),
  });
  if (sweep.isPending) return <Loading what="the sweep" />;
  if (sweep.isError) return <ErrorState error={sweep.error} title="Could not load the sweep" />;
  const data = sweep.data;
  const experimentPath = `/experiments/${encodeURIComponent(id)}`;
  return (
    <article aria-labelledby="sweep-title">
      <p>
        <Link href={experimentPath}>← Experiment</Link>
      </p>
      <div className="page-title">
        <h1 id="sweep-title">Sweep</h1>
        <StateBadge state={data.progress.done ? 'done' : 'running'} />
      </div>
      <SweepFacts sweep={data} />
      {data.warnings.length > 0 && (
        <ul className="warnings" role="status" aria-label="Warnings">
          {data.warnings.map((w) => (
            <li key={w}>{w}</li>
          ))}
        </ul>
      )}
      <SweepProgressBar progress={data.progress} />
      <SweepActions sweep={data} />
      {data.best && <SweepBestTrial sweep={data} best={data.best} />}
      {data.runs.some((r) => r.trial !== null || Object.keys(r.params).length > 0) && (
        <SweepPlots sweep={data} tableId={TRIALS_CAPTION} />
      )}
      <section aria-labelledby="sweep-runs-title">
        <h2 id="sweep-runs-title">Trials</h2>
        <SweepTrialsTable sweep={data} captionId={TRIALS_CAPTION} />
      </section>
    </article>
  );
}

function SweepActions({ sweep }: { sweep: Sweep }) {
  const client = useClient();
  const queryClient = useQueryClient();
  const id = sweep.experiment_id;
  const cancel = useMutation({
    mutationFn: () => client.sweeps.cancel(id, sweep.id),
    onSettled: () => void queryClient.invalidateQueries({ queryKey: queryKeys.experiment(id) }),
  });
  const compare = `/experiments/${encodeURIComponent(id)}/compare?sweep=${encodeURIComponent(sweep.id)}`;
  return (
    <>
      <div className="actions">
        <Link className="button" href={compare}>
          Compare runs
        </Link>
        {!sweep.progress.done && (
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
    </>
  );
}

/** Early stopping in a line: its kind and the settings given. */
function describeStopping(e: EarlyStopping): string {
  const { kind, ...settings } = e;
  const given = Object.entries(settings).map(([k, v]) => `${k} ${String(v)}`);
  return given.length ? `${kind} (${given.join(', ')})` : kind;
}

function SweepFacts({ sweep }: { sweep: Sweep }) {
  const d = sweep.declaration;
  return (
    <dl className="facts" data-testid="sweep-facts">
      <dt>Strategy</dt>
      <dd>{d.strategy}</dd>
      <dt>Trials</dt>
      <dd>{d.trials}</dd>
      {d.objective && (
        <>
          <dt>Objective</dt>
          <dd>
            {d.objective.metric} ({d.objective.goal})
          </dd>
        </>
      )}
      {d.early_stopping && (
        <>
          <dt>Early stopping</dt>
          <dd>{describeStopping(d.early_stopping)}</dd>
        </>
      )}
      {d.max_retries > 0 && (
        <>
          <dt>Retries</dt>
          <dd>up to {d.max_retries} a trial</dd>
        </>
      )}
      {d.seed !== null && (
        <>
          <dt>Seed</dt>
          <dd>{d.seed}</dd>
        </>
      )}
      <dt>Concurrency</dt>
      <dd>{sweep.concurrency}</dd>
      <dt>Created</dt>
      <dd>{formatTime(sweep.created_at)}</dd>
      <dt>Workflow</dt>
      <dd>
        {sweep.workflow_url ? (
          <a href={sweep.workflow_url} target="_blank" rel="noopener noreferrer">
            {sweep.workflow_id}
          </a>
        ) : (
          sweep.workflow_id
        )}
      </dd>
    </dl>
  );
}
