import type { RunData } from '@assay/client/browser';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { Link } from 'wouter';
import { formatDuration, formatTime } from '../format.ts';
import { queryKeys } from '../query-keys.ts';
import { useClient } from '../session.tsx';
import { TableScroll } from './query-view.tsx';
import { ErrorState, RunStateBadge } from './status.tsx';
import { TagList } from './tag-list.tsx';

export function runPath(run: { experiment_id: string; n: number; r: number }): string {
  return `/experiments/${encodeURIComponent(run.experiment_id)}/variations/${run.n}/runs/${run.r}`;
}

/**
 * Runs with their state, failure, managed badge, workflow link, recovery chain, and provision and cancel;
 * `all`: every run of the list `runs` is a page of, where a recovered run is looked up.
 */
export function RunsTable({ runs, all = runs }: { runs: RunData[]; all?: RunData[] }) {
  const byId = new Map(all.map((r) => [r.id, r]));
  return (
    <TableScroll>
      <table className="runs">
        <thead>
          <tr>
            <th scope="col">Run</th>
            <th scope="col">Name and tags</th>
            <th scope="col">State</th>
            <th scope="col">Failure</th>
            <th scope="col">Created</th>
            <th scope="col">Duration</th>
            <th scope="col">Workflow</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {runs.map((run) => (
            <RunRow
              key={run.id}
              run={run}
              recovers={run.recovers_run_id ? byId.get(run.recovers_run_id) : undefined}
            />
          ))}
        </tbody>
      </table>
    </TableScroll>
  );
}

function RunRow({ run, recovers }: { run: RunData; recovers: RunData | undefined }) {
  const client = useClient();
  const queryClient = useQueryClient();
  const refresh = () =>
    void queryClient.invalidateQueries({ queryKey: queryKeys.experiment(run.experiment_id) });
  const provision = useMutation({
    mutationFn: () => client.runs.provision(run.experiment_id, run.n, run.r),
    onSettled: refresh,
  });
  const cancel = useMutation({
    mutationFn: () => client.runs.cancel(run.experiment_id, run.n, run.r),
    onSettled: refresh,
  });
  const active = run.state === 'pending' || run.state === 'running';
  const label = `run ${run.n}.${run.r}`;
  return (
    <tr data-run={`${run.n}.${run.r}`}>
      <td>
        <span className="run-id">
          <Link href={runPath(run)}>
            {run.n}.{run.r}
          </Link>
        </span>
        {run.managed && <span className="badge managed">managed</span>}
        {run.recovers_run_id && (
          <div className="muted">
            recovers{' '}
            {recovers ? (
              <Link href={runPath(recovers)}>{`${recovers.n}.${recovers.r}`}</Link>
            ) : (
              'an earlier run'
            )}
          </div>
        )}
      </td>
      <td className="run-labels-cell">
        {run.name && <div className="run-name">{run.name}</div>}
        <TagList tags={run.tags} label={`Tags of ${label}`} />
        {run.archived_at && <span className="badge archived">archived</span>}
        {!run.name && run.tags.length === 0 && !run.archived_at && <span className="muted">—</span>}
      </td>
      <td data-testid="run-state">
        <RunStateBadge run={run} />
        {run.cancel_requested && run.state === 'running' && <span className="muted"> stopping…</span>}
      </td>
      <td className="failure">
        {run.failure_reason && <code>{run.failure_reason}</code>} {run.failure_message}
      </td>
      <td>{formatTime(run.created_at)}</td>
      <td>{formatDuration(run.started_at, run.ended_at)}</td>
      <td>
        {run.workflow_url ? (
          <a href={run.workflow_url} target="_blank" rel="noopener noreferrer">
            Temporal UI
          </a>
        ) : (
          (run.workflow_id ?? '—')
        )}
      </td>
      <td>
        <div className="row-actions">
          {run.state === 'pending' && !run.managed && (
            <button
              type="button"
              onClick={() => provision.mutate()}
              disabled={provision.isPending}
              aria-label={`Provision ${label}`}
            >
              Provision
            </button>
          )}
          {active && !run.cancel_requested && (
            <button
              type="button"
              onClick={() => cancel.mutate()}
              disabled={cancel.isPending}
              aria-label={`Cancel ${label}`}
            >
              Cancel
            </button>
          )}
          {provision.isError && <ErrorState error={provision.error} />}
          {cancel.isError && <ErrorState error={cancel.error} />}
        </div>
      </td>
    </tr>
  );
}
