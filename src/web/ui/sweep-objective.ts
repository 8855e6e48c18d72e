import type { ApiClient, RunData } from '@assay/client/browser';
import { useQueries, useQuery } from '@tanstack/react-query';
import { queryKeys } from './query-keys.ts';

/** Sweeps of an experiment looked into for a run's objective: the newest few that declare one. */
const MAX_SWEEPS_LOOKED_AT = 5;

/**
 * The objective metric of the sweep the run belongs to, or null when it belongs to none with an objective
 * (undefined while that is read). A run does not name its sweep: the experiment's newest sweeps that declare
 * an objective are read, and the first listing the run answers.
 */
export function useRunObjective(client: ApiClient, run: RunData): string | null | undefined {
  const sweeps = useQuery({
    queryKey: queryKeys.sweeps(run.experiment_id, undefined),
    queryFn: () => client.sweeps.list(run.experiment_id),
  });
  const withObjective = (sweeps.data?.items ?? [])
    .filter((s) => s.declaration.objective)
    .slice(0, MAX_SWEEPS_LOOKED_AT);
  const details = useQueries({
    queries: withObjective.map((s) => ({
      queryKey: queryKeys.sweep(run.experiment_id, s.id),
      queryFn: () => client.sweeps.get(run.experiment_id, s.id),
    })),
  });
  if (sweeps.isError) return null;
  if (!sweeps.data) return undefined;
  for (const detail of details) {
    if (!detail.data) return detail.isError ? null : undefined;
    if (detail.data.runs.some((x) => x.n === run.n && x.r === run.r))
      return detail.data.declaration.objective?.metric ?? null;
  }
  return null;
}
