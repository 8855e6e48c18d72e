// Every react-query key of the UI, built here so that a read and the invalidations that must reach it agree.
// Keys nest: invalidating a key also reaches every key that starts with it, so `experiment(id)` refreshes all
// of one experiment's reads (its variations, runs, sweeps, lineage, metrics) after a change to it.
import type { StepRange } from './metric-series.ts';

export const queryKeys = {
  me: () => ['me'] as const,
  /** The caller's organizations (the header's scope menu and the organizations page). */
  scopes: () => ['me', 'scopes'] as const,
  apiKeys: () => ['api-keys'] as const,
  search: (scope: string, submitted: { q: string; kind: string } | null) =>
    ['search', scope, submitted] as const,

  /** Prefix of every experiments list, whatever its scope and filters. */
  experiments: () => ['experiments'] as const,
  experimentList: (scope: string, filters: object, cursor: string | undefined) =>
    ['experiments', scope, filters, cursor] as const,
  /** The scope's newest experiments, offered as a filter's choices. */
  experimentChoices: (scope: string) => ['experiments', scope, 'choices'] as const,

  /** Prefix of everything read about one experiment. */
  experiment: (id: string) => ['experiment', id] as const,
  variations: (id: string) => ['experiment', id, 'variations'] as const,
  runs: (id: string, n: number) => ['experiment', id, 'runs', n] as const,
  /** Every variation's runs of the experiment (the compare page's one read of them). */
  experimentRuns: (id: string) => ['experiment', id, 'runs', 'all'] as const,
  /** A variation's runs as a runs table filters them (by state, tags, archived or not). */
  runList: (id: string, n: number, filters: object) => ['experiment', id, 'runs', n, filters] as const,
  variation: (id: string, n: number) => ['experiment', id, 'variations', n] as const,
  runAssets: (id: string, n: number, r: number) => ['experiment', id, 'runs', n, r, 'assets'] as const,
  lineage: (id: string, depth: number) => ['experiment', id, 'lineage', depth] as const,
  sweep: (id: string, sweepId: string | null) => ['experiment', id, 'sweep', sweepId] as const,
  /** A page of the experiment's sweeps. */
  sweeps: (id: string, cursor: string | undefined) => ['experiment', id, 'sweeps', cursor] as const,
  outputs: (id: string, name: string, ended: number) => ['experiment', id, 'outputs', name, ended] as const,
  metricKeys: (id: string) => ['experiment', id, 'metric-keys'] as const,
  metricFigures: (id: string, keys: readonly string[], running: boolean) =>
    ['experiment', id, 'metrics', keys.join(','), running] as const,
  curves: (id: string, key: string, maxPoints: number, zoom: StepRange | null, running: boolean) =>
    ['experiment', id, 'curves', key, maxPoints, zoom?.min, zoom?.max, running] as const,

  /** A page of a run's metric keys (the list and its picker); read once more when the run ends. */
  runMetricKeys: (
    runId: string,
    page: { limit: number; cursor?: string; contains?: string },
    ended: boolean,
  ) => ['run', runId, 'metric-keys', page.limit, page.cursor, page.contains, ended] as const,
  runMetricSeries: (runId: string, key: string, maxPoints: number, zoom: StepRange | null, ended: boolean) =>
    ['run', runId, 'metric', key, maxPoints, zoom?.min, zoom?.max, ended] as const,

  /** A ready asset's component read as JSON (ready assets never change). */
  assetJson: (assetId: string) => ['asset', assetId, 'json'] as const,
  /** Prefix of every assets list, whatever its filters. */
  assets: () => ['assets'] as const,
  assetList: (filters: object, cursor: string | undefined) => ['assets', filters, cursor] as const,

  organization: (id: string) => ['organizations', id] as const,
  members: (organizationId: string) => ['organizations', organizationId, 'members'] as const,
};
