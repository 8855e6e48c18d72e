import { useQueryClient } from '@tanstack/react-query';
import { queryKeys } from './query-keys.ts';

/** Invalidates what a change to an experiment can alter: its detail, variations and runs, and the lists. */
export function useExperimentRefresh(id: string): () => void {
  const queryClient = useQueryClient();
  return () => {
    void queryClient.invalidateQueries({ queryKey: queryKeys.experiment(id) });
    void queryClient.invalidateQueries({ queryKey: queryKeys.experiments() });
  };
}
