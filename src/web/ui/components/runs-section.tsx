import type { ExperimentDetail, RunData, VariationData } from '@assay/client/browser';
import { keepPreviousData, useQueries } from '@tanstack/react-query';
import { RUN_STATES, type RunState } from '@assay/contract/enums';
import { useState } from 'react';
import { queryKeys } from '../query-keys.ts';
import { runsRefetchInterval } from '../run-polling.ts';
import { useClient } from '../session.tsx';
import { PageNav } from './pager.tsx';
import { RunsTable } from './runs-table.tsx';
import { QueryView } from './query-view.tsx';
import { Empty } from './status.tsx';
import { parseTags } from '../tags.ts';

/**
 * Rows the run table shows at a time: a thousand rows (each with its buttons and links) took the browser
 * ~0.6 s to render and lay out on a first look; a page of them takes a tenth of that.
 */
export const RUN_TABLE_PAGE = 100;

/** The experiment's runs, all variations or one, kept live by polling, a page of rows at a time. */
export function RunsSection({
  experiment,
  variations,
}: {
  experiment: ExperimentDetail;
  variations: VariationData[];
}) {
  const client = useClient();
  const [only, setOnly] = useState<number | 'all'>('all');
  const [state, setState] = useState<RunState | ''>('');
  const [tagText, setTagText] = useState('');
  const [archived, setArchived] = useState(false);
  const [page, setPage] = useState(0);
  const tags = parseTags(tagText);
  const filters = {
    state: state || undefined,
    tags: tags.length > 0 ? tags : undefined,
    archived: archived || undefined,
  };
  const filtered = filters.state !== undefined || filters.tags !== undefined || archived;
  const shown = only === 'all' ? variations : variations.filter((v) => v.n === only);
  const results = useQueries({
    queries: shown.map((v) => ({
      // Unfiltered, the same read as the compare page's and the run page's chain.
      queryKey: filtered
        ? queryKeys.runList(experiment.id, v.n, filters)
        : queryKeys.runs(experiment.id, v.n),
      queryFn: () => client.runs.list(experiment.id, v.n, filters),
      refetchInterval: (query: { state: { data?: RunData[] } }) => runsRefetchInterval(query.state.data),
      placeholderData: keepPreviousData,
    })),
  });
  const failed = results.find((r) => r.isError);
  const runs = results
    .flatMap((r) => r.data ?? [])
    .sort((a, b) => b.created_at.localeCompare(a.created_at) || b.r - a.r);
  // One read's state for the variations' lists: the first failure, else loading until every list arrived.
  const query = {
    isPending: !failed && results.some((r) => r.isPending),
    isError: !!failed,
    error: failed?.error,
    data: runs,
  };
  return (
    <section aria-labelledby="runs-title">
      <div className="page-title">
        <h2 id="runs-title">Runs</h2>
        <label className="inline">
          <span>Variation</span>
          <select
            value={String(only)}
            onChange={(e) => {
              setOnly(e.target.value === 'all' ? 'all' : Number(e.target.value));
              setPage(0);
            }}
          >
            <option value="all">All variations</option>
            {variations.map((v) => (
              <option key={v.n} value={v.n}>
                Variation {v.n}
              </option>
            ))}
          </select>
        </label>
      </div>
      <form
        className="filters run-filters"
        role="search"
        aria-label="Filter runs"
        onSubmit={(e) => e.preventDefault()}
      >
        <label>
          <span>State</span>
          <select
            value={state}
            onChange={(e) => {
              setState(e.target.value as RunState | '');
              setPage(0);
            }}
          >
            <option value="">Any state</option>
            {RUN_STATES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <label className="grow">
          <span>Tags (comma-separated; a run has every one)</span>
          <input
            type="search"
            value={tagText}
            onChange={(e) => {
              setTagText(e.target.value);
              setPage(0);
            }}
            placeholder="e.g. baseline"
          />
        </label>
        <label className="inline">
          <input
            type="checkbox"
            checked={archived}
            onChange={(e) => {
              setArchived(e.target.checked);
              setPage(0);
            }}
          />
          <span>Archived runs too</span>
        </label>
      </form>
      <QueryView
        query={query}
        what="runs"
        errorTitle="Could not load the runs"
        isEmpty={(data) => data.length === 0}
        empty={
          <Empty command={`assay runs create ${experiment.id} 1`}>
            {filtered
              ? 'No run matches these filters.'
              : experiment.state === 'committed'
                ? 'No runs yet. Start one with New run on a variation, then Provision it to run it on managed compute.'
                : experiment.state === 'draft'
                  ? 'Runs become possible once the experiment is committed.'
                  : 'This experiment had no runs.'}
          </Empty>
        }
      >
        {(data) => <RunsPage runs={data} page={page} setPage={setPage} />}
      </QueryView>
    </section>
  );
}

/** One page of the runs, with Previous / Next and which rows these are when there is more than one page. */
function RunsPage({
  runs,
  page,
  setPage,
}: {
  runs: RunData[];
  page: number;
  setPage: (page: number) => void;
}) {
  const pages = Math.ceil(runs.length / RUN_TABLE_PAGE);
  // A list that shrank (a filter, a poll) may leave fewer pages than the one shown.
  const shown = Math.min(page, pages - 1);
  const from = shown * RUN_TABLE_PAGE;
  const rows = runs.slice(from, from + RUN_TABLE_PAGE);
  return (
    <>
      <RunsTable runs={rows} all={runs} />
      {pages > 1 && (
        <PageNav
          label={`Runs ${(from + 1).toLocaleString()}–${(from + rows.length).toLocaleString()} of ${runs.length.toLocaleString()}`}
          onPrevious={shown > 0 ? () => setPage(shown - 1) : undefined}
          onNext={shown < pages - 1 ? () => setPage(shown + 1) : undefined}
        />
      )}
    </>
  );
}
