import { Type, type Static } from 'typebox';
import { JsonObject, Nullable, OneOf, PageQuery, Timestamp, Uuid } from './common.ts';
import { FAILURE_REASONS, RunPriority, RunStateSchema } from './runs.ts';
import { GOALS, SEARCH_STRATEGIES, type EarlyStoppingKind, type SearchStrategy } from './enums.ts';

/** What every sweep request carries, whatever its strategy. */
const SWEEP_COMMON = {
  base_yaml: Type.String({
    maxLength: 1_000_000,
    description: 'the base variation config, YAML as POST …/variations takes it',
  }),
  concurrency: Type.Optional(Type.Integer({ minimum: 1, maximum: 64, default: 4 })),
  name_prefix: Type.Optional(Type.String({ minLength: 1, maxLength: 100, default: 'sweep' })),
};

/** One dimension of a search space, by `distribution`. */
export const UniformDistribution = Type.Object(
  { distribution: Type.Literal('uniform'), low: Type.Number(), high: Type.Number() },
  { additionalProperties: false, $id: 'UniformDistribution' },
);
export const LogUniformDistribution = Type.Object(
  {
    distribution: Type.Literal('log_uniform'),
    low: Type.Number({ description: 'greater than 0' }),
    high: Type.Number(),
  },
  { additionalProperties: false, $id: 'LogUniformDistribution' },
);
export const IntDistribution = Type.Object(
  {
    distribution: Type.Literal('int'),
    low: Type.Integer(),
    high: Type.Integer({ description: 'inclusive' }),
    log: Type.Optional(Type.Boolean({ default: false, description: 'sample on a log scale (low ≥ 1)' })),
  },
  { additionalProperties: false, $id: 'IntDistribution' },
);
export const ChoiceDistribution = Type.Object(
  {
    distribution: Type.Literal('choice'),
    values: Type.Array(Type.Unknown(), { maxItems: 1000, description: 'at least one value' }),
  },
  { additionalProperties: false, $id: 'ChoiceDistribution' },
);
export const DISTRIBUTIONS = {
  uniform: UniformDistribution,
  log_uniform: LogUniformDistribution,
  int: IntDistribution,
  choice: ChoiceDistribution,
} as const;
export type DistributionKind = keyof typeof DISTRIBUTIONS;
export type Distribution =
  | Static<typeof UniformDistribution>
  | Static<typeof LogUniformDistribution>
  | Static<typeof IntDistribution>
  | Static<typeof ChoiceDistribution>;
export const Distribution = Type.Unsafe<Distribution>({
  type: 'object',
  oneOf: Object.values(DISTRIBUTIONS),
  discriminator: { propertyName: 'distribution' },
  description: 'tagged by `distribution`: uniform, log_uniform, int, choice',
});

/** dotted path into the base config → its distribution. */
export const SearchSpace = Type.Record(Type.String(), Distribution, { maxProperties: 100 });
export type SearchSpace = Record<string, Distribution>;

/** The metric the sweep optimises: the last value a run logged under that key is its trial's result. */
export const Objective = Type.Object(
  {
    metric: Type.String({ minLength: 1, maxLength: 255 }),
    goal: OneOf(GOALS),
  },
  { additionalProperties: false },
);
export type Objective = Static<typeof Objective>;

/**
 * Successive halving (asynchronous, as Optuna's SuccessiveHalvingPruner): rungs at min_step ×
 * reduction_factor^(min_early_stopping_rate + k); a trial reaching a rung goes on only when its value is in
 * the top 1/reduction_factor of the values seen at that rung. `max_step` is the step a full trial reaches.
 */
export const AshaStopping = Type.Object(
  {
    kind: Type.Literal('asha'),
    min_step: Type.Optional(Type.Integer({ minimum: 1, description: 'default 1' })),
    max_step: Type.Optional(Type.Integer({ minimum: 1 })),
    reduction_factor: Type.Optional(Type.Integer({ minimum: 2, maximum: 100, description: 'default 3' })),
    min_early_stopping_rate: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 30, description: 'default 0' }),
    ),
  },
  { additionalProperties: false },
);
/** Hyperband (as Optuna's HyperbandPruner): successive-halving brackets, each trial in one by its number. */
export const HyperbandStopping = Type.Object(
  {
    kind: Type.Literal('hyperband'),
    min_step: Type.Optional(Type.Integer({ minimum: 1, description: 'default 1' })),
    max_step: Type.Integer({ minimum: 1 }),
    reduction_factor: Type.Optional(Type.Integer({ minimum: 2, maximum: 100, description: 'default 3' })),
  },
  { additionalProperties: false },
);
/**
 * Median (as Optuna's MedianPruner): a trial stops when its best value so far is worse than the median of the
 * finished trials' values at the same step.
 */
export const MedianStopping = Type.Object(
  {
    kind: Type.Literal('median'),
    startup_trials: Type.Optional(Type.Integer({ minimum: 0, description: 'default 5' })),
    warmup_steps: Type.Optional(Type.Integer({ minimum: 0, description: 'default 0' })),
    interval_steps: Type.Optional(Type.Integer({ minimum: 1, description: 'default 1' })),
    min_trials: Type.Optional(Type.Integer({ minimum: 1, description: 'default 1' })),
  },
  { additionalProperties: false },
);
export const EARLY_STOPPING_KINDS = {
  asha: AshaStopping,
  hyperband: HyperbandStopping,
  median: MedianStopping,
} as const satisfies Record<EarlyStoppingKind, unknown>;
export type EarlyStopping =
  Static<typeof AshaStopping> | Static<typeof HyperbandStopping> | Static<typeof MedianStopping>;
// Untagged for the schema (each member's `kind` is a constant, so exactly one matches): the union is part of
// every strategy's body, and a discriminator would need each member named once per document.
export const EarlyStopping = Type.Unsafe<EarlyStopping>({
  oneOf: Object.values(EARLY_STOPPING_KINDS),
  description: 'by `kind`: asha, hyperband, median',
});

/** What each early-stopping kind takes when a field is left out (Optuna's pruners' own defaults). */
export const EARLY_STOPPING_DEFAULTS = {
  asha: { min_step: 1, reduction_factor: 3, min_early_stopping_rate: 0 },
  hyperband: { min_step: 1, reduction_factor: 3 },
  median: { startup_trials: 5, warmup_steps: 0, interval_steps: 1, min_trials: 1 },
} as const satisfies Record<EarlyStoppingKind, object>;

/** The early stopping with every field it left out at its default: what a sweep declares and stores. */
export const withStoppingDefaults = (stopping: EarlyStopping): EarlyStopping =>
  ({ ...EARLY_STOPPING_DEFAULTS[stopping.kind], ...stopping }) as EarlyStopping;

export const MAX_SWEEP_TRIALS = 1000;

/** What every sweep may add to its strategy: an objective, early stopping by it, retries of failed trials. */
const SWEEP_TUNING = {
  objective: Type.Optional(Objective),
  early_stopping: Type.Optional(EarlyStopping),
  max_retries: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: 10,
      default: 0,
      description: 'new runs of a trial that failed crash, heartbeat_timeout, provision_failed or preempted',
    }),
  ),
  priority: Type.Optional(RunPriority),
};

/** `strategy: grid`: every combination of the values, the first path varying slowest. */
export const GridSweepBody = Type.Object(
  {
    strategy: Type.Literal('grid'),
    grid: Type.Record(Type.String(), Type.Array(Type.Unknown()), {
      description: 'dotted path → values; every combination, in key order',
    }),
    ...SWEEP_COMMON,
    ...SWEEP_TUNING,
  },
  { additionalProperties: false, $id: 'GridSweepBody' },
);
export type GridSweepBody = Static<typeof GridSweepBody>;

/** `strategy: list`: one variation per entry. */
export const ListSweepBody = Type.Object(
  {
    strategy: Type.Literal('list'),
    list: Type.Array(Type.Record(Type.String(), Type.Unknown()), {
      description: 'one variation per entry of dotted path → value',
    }),
    ...SWEEP_COMMON,
    ...SWEEP_TUNING,
  },
  { additionalProperties: false, $id: 'ListSweepBody' },
);
export type ListSweepBody = Static<typeof ListSweepBody>;

/** random, sobol and tpe: `trials` suggestions from the space, each a variation made when it starts. */
export const SearchSweepBody = Type.Object(
  {
    // An enum, not a union of constants: the request's discriminator reads the tag's values from it.
    strategy: Type.Unsafe<SearchStrategy>({ type: 'string', enum: [...SEARCH_STRATEGIES] }),
    space: SearchSpace,
    trials: Type.Integer({ minimum: 1, maximum: MAX_SWEEP_TRIALS }),
    seed: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 2 ** 31 - 1,
        description: 'the same seed and the same results give the same suggestions; chosen when absent',
      }),
    ),
    ...SWEEP_COMMON,
    ...SWEEP_TUNING,
  },
  { additionalProperties: false, $id: 'SearchSweepBody' },
);
export type SearchSweepBody = Static<typeof SearchSweepBody>;

/** `strategy: repeat` on a committed experiment: `repeats` more runs of each (or the named) variations. */
export const RepeatSweepBody = Type.Object(
  {
    strategy: Type.Literal('repeat'),
    repeats: Type.Integer({ minimum: 1, maximum: 100 }),
    variations: Type.Optional(
      Type.Array(Type.Integer({ minimum: 1 }), { minItems: 1, maxItems: 1000, uniqueItems: true }),
    ),
    seed: Type.Optional(Type.Integer({ minimum: 0, maximum: 2 ** 31 - 1 })),
    concurrency: SWEEP_COMMON.concurrency,
    ...SWEEP_TUNING,
  },
  { additionalProperties: false, $id: 'RepeatSweepBody' },
);
export type RepeatSweepBody = Static<typeof RepeatSweepBody>;

/** One member per strategy, keyed by its `strategy` tag: a new strategy is a member here and its points. */
export const SWEEP_STRATEGIES = {
  grid: GridSweepBody,
  list: ListSweepBody,
  random: SearchSweepBody,
  sobol: SearchSweepBody,
  tpe: SearchSweepBody,
  repeat: RepeatSweepBody,
} as const;
export type SweepStrategy = keyof typeof SWEEP_STRATEGIES;

type GridOrList = GridSweepBody | ListSweepBody;
export type CreateSweepBody = GridOrList | SearchSweepBody | RepeatSweepBody;

/**
 * POST /experiments/{id}/sweeps: a union tagged by `strategy` (validated through the tag, so an error names
 * the chosen member's field). A body without `strategy`, as written before it existed, is read as `grid`
 * when it has `grid` and as `list` when it has `list`.
 */
export const CreateSweepBody = Type.Unsafe<CreateSweepBody>({
  type: 'object',
  // One schema per body shape: random, sobol and tpe share theirs (its `strategy` an enum of the three).
  oneOf: [...new Set(Object.values(SWEEP_STRATEGIES))],
  discriminator: { propertyName: 'strategy' },
  description:
    'tagged by `strategy` (grid, list, random, sobol, tpe, repeat); without it, the one of `grid` and `list` given',
});

type WithoutConcurrency<B> = B extends unknown ? Omit<B, 'concurrency'> : never;
/** What a sweep varies, as stored with it: the request less its concurrency. */
export type SweepSpec = WithoutConcurrency<CreateSweepBody>;

/** The grid and list workflow's own count of its runs (its result); `done` once every run has ended. */
export const SweepProgress = Type.Object({
  total: Type.Integer(),
  pending: Type.Integer(),
  running: Type.Integer(),
  succeeded: Type.Integer(),
  failed: Type.Integer(),
  done: Type.Boolean(),
});
export type SweepProgress = Static<typeof SweepProgress>;

/**
 * A sweep's progress as the API answers it, counted from its runs' recorded states: each run in exactly one
 * of pending, running, succeeded, failed, stopped_early (failed by early stopping) and retried (failed, and a
 * later run of its trial took over). `failed_by_reason` counts the `failed` ones. `done` once the sweep
 * has no more runs to start and every run has ended.
 */
export const SweepRunCounts = Type.Object({
  ...SweepProgress.properties,
  stopped_early: Type.Integer(),
  retried: Type.Integer(),
  failed_by_reason: Type.Record(Type.String(), Type.Integer(), {
    description: 'failure reason → how many runs failed for it',
  }),
});
export type SweepRunCounts = Static<typeof SweepRunCounts>;

/** One managed run of a sweep, on a variation of its own (a trial's), or a repeat of an existing one. */
export const SweepRun = Type.Object({
  /** The run's id, which a retry's `retries_run_id` names. */
  id: Uuid,
  n: Type.Integer(),
  r: Type.Integer(),
  variation_name: Type.String(),
  workflow_id: Type.String(),
  state: RunStateSchema,
  failure_reason: Nullable(OneOf(FAILURE_REASONS)),
  /** The trial (1-based) the run is of; null for runs of a grid, list or repeat sweep. */
  trial: Nullable(Type.Integer()),
  /** What the trial's point set: dotted path → value. */
  params: JsonObject,
  /** The last value the run logged for the objective, and at which step; null before any. */
  objective: Nullable(Type.Number()),
  step: Nullable(Type.Integer()),
  retries_run_id: Nullable(Uuid),
});
export type SweepRun = Static<typeof SweepRun>;

/** The best finished trial so far by the objective. */
export const SweepBest = Type.Object({
  n: Type.Integer(),
  r: Type.Integer(),
  variation_name: Type.String(),
  trial: Nullable(Type.Integer()),
  value: Type.Number(),
  params: JsonObject,
  config: JsonObject,
});
export type SweepBest = Static<typeof SweepBest>;

/** What the sweep declared at its creation (frozen by the commit it made): its request less base_yaml. */
export const SweepDeclaration = Type.Object(
  {
    strategy: Type.String(),
    // Typed as the request's, but not validated again on the way out (the request's were).
    space: Type.Optional(Type.Unsafe<SearchSpace>(Type.Record(Type.String(), JsonObject))),
    grid: Type.Optional(JsonObject),
    list: Type.Optional(Type.Array(JsonObject)),
    repeats: Type.Optional(Type.Integer()),
    variations: Type.Optional(Type.Array(Type.Integer())),
    trials: Type.Integer({ description: 'how many trials (or runs, for grid, list and repeat) it makes' }),
    objective: Nullable(Objective),
    early_stopping: Nullable(Type.Unsafe<EarlyStopping>(JsonObject)),
    max_retries: Type.Integer(),
    seed: Nullable(Type.Integer()),
    name_prefix: Type.Optional(Type.String()),
  },
  {},
);
export type SweepDeclaration = Static<typeof SweepDeclaration>;

export const Sweep = Type.Object(
  {
    id: Uuid,
    experiment_id: Uuid,
    workflow_id: Type.String(),
    workflow_url: Nullable(Type.String()),
    concurrency: Type.Integer(),
    created_at: Timestamp,
    declaration: SweepDeclaration,
    runs: Type.Array(SweepRun),
    progress: SweepRunCounts,
    best: Nullable(SweepBest),
    /** What a researcher should know, e.g. that no finished trial logged the objective metric. */
    warnings: Type.Array(Type.String()),
  },
  { $id: 'Sweep' },
);
export type Sweep = Static<typeof Sweep>;

/** A sweep in the experiment's list: no runs, its progress and best value. */
export const SweepSummary = Type.Object(
  {
    id: Uuid,
    experiment_id: Uuid,
    workflow_id: Type.String(),
    concurrency: Type.Integer(),
    created_at: Timestamp,
    declaration: SweepDeclaration,
    progress: SweepRunCounts,
    best_value: Nullable(Type.Number()),
  },
  { $id: 'SweepSummary' },
);
export type SweepSummary = Static<typeof SweepSummary>;
export const SweepList = Type.Object({
  items: Type.Array(SweepSummary),
  next_cursor: Nullable(Type.String()),
});
export const SweepListQuery = Type.Object({ ...PageQuery });

export const SweepParams = Type.Object({ id: Uuid, sweep_id: Uuid });
