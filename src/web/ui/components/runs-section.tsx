import type { ExperimentDetail, RunData, VariationData } from '@assay/client/browser';
import { useQueries } from '@tanstack/react-query';
import { useState } from 'react';
import { queryKeys } from '../query-keys.ts';
import { runsRefetchInterval } from '../run-polling.ts';
import { useClient } from '../session.tsx';
import { RunsTable } from './runs-table.tsx';
import { QueryView } from './query-view.tsx';
import { Empty } from './status.tsx';

/** The experiment's runs, all variations or one, kept live by polling. */
export function RunsSection({
  experiment,
  variations,
}: {
  experiment: ExperimentDetail;
  variations: VariationData[];
}) {
  const client = useClient();
  const [only, setOnly] = useState<number | 'all'>('all');
  const shown = only === 'all' ? variations : variations.filter((v) => v.n === only);
  const results = useQueries({
    queries: shown.map((v) => ({
      queryKey: queryKeys.runs(experiment.id, v.n),
      queryFn: () => client.runs.list(experiment.id, v.n),
      refetchInterval: (query: { state: { data?: RunData[] } }) => runsRefetchInterval(query.state.data),
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
            onChange={(e) => setOnly(e.target.value === 'all' ? 'all' : Number(e.target.value))}
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
      <QueryView
        query={query}
        what="runs"
        errorTitle="Could not load the runs"
        isEmpty={(data) => data.length === 0}
        empty={
          <Empty command={`assay runs create ${experiment.id} 1`}>
            {experiment.state === 'committed'
              ? 'No runs yet. Start one with New run on a variation, then Provision it to run it on managed compute.'
              : experiment.state === 'draft'
                ? 'Runs become possible once the experiment is committed.'
                : 'This experiment had no runs.'}
          </Empty>
        }
      >
        {(data) => <RunsTable runs={data} />}
      </QueryView>
    </section>
  );
}
