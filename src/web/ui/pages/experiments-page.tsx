import { EXPERIMENT_STATES } from '@assay/contract/enums';
import type { ExperimentState, ExperimentSummary } from '@assay/client/browser';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'wouter';
import { useCursorPages } from '../components/pager.tsx';
import { QueryView, TableScroll } from '../components/query-view.tsx';
import { ScopeNote } from '../components/scope-note.tsx';
import { Empty, StateBadge } from '../components/status.tsx';
import { TagList } from '../components/tag-list.tsx';
import { parseTags } from '../tags.ts';
import { formatTime } from '../format.ts';
import { queryKeys } from '../query-keys.ts';
import { useClient, useSession } from '../session.tsx';

const STATES: readonly ExperimentState[] = EXPERIMENT_STATES;
const PAGE_SIZE = 25;

/** The scope's experiments, newest first, with a state filter, a text query and cursor pagination. */
export function ExperimentsPage() {
  const client = useClient();
  const { scope } = useSession();
  const [state, setState] = useState<ExperimentState | ''>('');
  const [q, setQ] = useState('');
  const [tagText, setTagText] = useState('');
  const pages = useCursorPages();
  const { cursor } = pages;
  const tags = parseTags(tagText);
  const filters = {
    state: state || undefined,
    q: q.trim() || undefined,
    tags: tags.length > 0 ? tags : undefined,
  };
  const list = useQuery({
    queryKey: queryKeys.experimentList(scope, filters, cursor),
    queryFn: () => client.experiments.list({ ...filters, cursor, limit: PAGE_SIZE, organizationId: scope }),
    placeholderData: keepPreviousData,
  });
  const resetPaging = pages.reset;

  return (
    <section aria-labelledby="experiments-title">
      <div className="page-title">
        <h1 id="experiments-title">Experiments</h1>
        <Link href="/experiments/new" className="button primary">
          New experiment
        </Link>
      </div>
      <form className="filters" role="search" onSubmit={(e) => e.preventDefault()}>
        <label>
          <span>State</span>
          <select
            value={state}
            onChange={(e) => {
              setState(e.target.value as ExperimentState | '');
              resetPaging();
            }}
          >
            <option value="">Any state</option>
            {STATES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <label className="grow">
          <span>Search name, description, hypothesis</span>
          <input
            type="search"
            value={q}
            onChange={(e) => {
              setQ(e.target.value);
              resetPaging();
            }}
          />
        </label>
        <label>
          <span>Tags</span>
          <input
            type="search"
            value={tagText}
            placeholder="e.g. vision, baseline"
            onChange={(e) => {
              setTagText(e.target.value);
              resetPaging();
            }}
          />
        </label>
      </form>
      {list.data && <ScopeNote scope={list.data.scope} what="Experiments" />}
      <QueryView
        query={list}
        what="experiments"
        errorTitle="Could not list experiments"
        isEmpty={(data) => data.items.length === 0}
        empty={
          <Empty command={`assay experiments create --name "…" --hypothesis "…"`}>
            {filters.state || filters.q || filters.tags
              ? 'No experiment matches these filters.'
              : 'No experiments in this scope yet. Create one with New experiment.'}
          </Empty>
        }
        pager={{ pages, nextCursor: list.data?.next_cursor }}
      >
        {(data, stale) => <ExperimentTable items={data.items} stale={stale} />}
      </QueryView>
    </section>
  );
}

/** `stale`: the previous filter's rows, shown dimmed while the new ones load. */
function ExperimentTable({ items, stale }: { items: ExperimentSummary[]; stale: boolean }) {
  return (
    <TableScroll stale={stale}>
      <table className="experiments">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">State</th>
            <th scope="col">Runs (pending / running / succeeded / failed)</th>
            <th scope="col">Created</th>
          </tr>
        </thead>
        <tbody>
          {items.map((e) => (
            <tr key={e.id}>
              <td>
                <Link href={`/experiments/${encodeURIComponent(e.id)}`}>{e.name}</Link>
                {e.hypothesis && <div className="muted clamp">{e.hypothesis}</div>}
                <TagList tags={e.tags} label={`Tags of ${e.name}`} />
              </td>
              <td>
                <StateBadge state={e.state} />
              </td>
              <td className="run-counts">
                <span className="state-pending" title="pending">
                  {e.run_counts.pending}
                </span>{' '}
                /{' '}
                <span className="state-running" title="running">
                  {e.run_counts.running}
                </span>{' '}
                /{' '}
                <span className="state-succeeded" title="succeeded">
                  {e.run_counts.succeeded}
                </span>{' '}
                /{' '}
                <span className="state-failed" title="failed">
                  {e.run_counts.failed}
                </span>
              </td>
              <td>{formatTime(e.created_at)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableScroll>
  );
}
