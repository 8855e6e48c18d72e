import { Type, type Static } from 'typebox';
import { Nullable, OneOf, Timestamp, Uuid } from './common.ts';
import { FAILURE_REASONS, RunStateSchema } from './runs.ts';

/** What every sweep request carries, whatever its strategy. */
const SWEEP_COMMON = {
  base_yaml: Type.String({
    maxLength: 1_000_000,
    description: 'the base variation config, YAML as POST …/variations takes it',
  }),
  concurrency: Type.Optional(Type.Integer({ minimum: 1, maximum: 64, default: 4 })),
  name_prefix: Type.Optional(Type.String({ minLength: 1, maxLength: 100, default: 'sweep' })),
};

/** `strategy: grid`: every combination of the values, the first path varying slowest. */
export const GridSweepBody = Type.Object(
  {
    strategy: Type.Literal('grid'),
    grid: Type.Record(Type.String(), Type.Array(Type.Unknown()), {
      description: 'dotted path → values; every combination, in key order',
    }),
    ...SWEEP_COMMON,
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
  },
  { additionalProperties: false, $id: 'ListSweepBody' },
);
export type ListSweepBody = Static<typeof ListSweepBody>;

/** One member per strategy, keyed by its `strategy` tag: a new strategy is a member here and its points. */
export const SWEEP_STRATEGIES = { grid: GridSweepBody, list: ListSweepBody } as const;
export type SweepStrategy = keyof typeof SWEEP_STRATEGIES;

/**
 * POST /experiments/{id}/sweeps: a union tagged by `strategy` (validated through the tag, so an error names
 * the chosen member's field). A body without `strategy`, as written before it existed, is read as `grid`
 * when it has `grid` and as `list` when it has `list`.
 */
export const CreateSweepBody = Type.Unsafe<GridSweepBody | ListSweepBody>({
  type: 'object',
  oneOf: Object.values(SWEEP_STRATEGIES),
  discriminator: { propertyName: 'strategy' },
  description: 'tagged by `strategy` (grid, list); without it, the one of `grid` and `list` given',
});
export type CreateSweepBody = GridSweepBody | ListSweepBody;

type WithoutConcurrency<B> = B extends unknown ? Omit<B, 'concurrency'> : never;
/** What a sweep varies, as stored with it: the request less its concurrency. */
export type SweepSpec = WithoutConcurrency<CreateSweepBody>;

/** The sweep workflow's own count of its runs (its result); `done` once every run has ended. */
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
 * A sweep's progress as the API answers it: counted from its runs' recorded states (recoveries included), the
 * failed ones also by reason; `done` once every run has ended.
 */
export const SweepRunCounts = Type.Object({
  ...SweepProgress.properties,
  failed_by_reason: Type.Record(Type.String(), Type.Integer(), {
    description: 'failure reason → how many runs failed for it',
  }),
});
export type SweepRunCounts = Static<typeof SweepRunCounts>;

/** One managed run of a sweep, on a variation of its own. */
export const SweepRun = Type.Object({
  n: Type.Integer(),
  r: Type.Integer(),
  variation_name: Type.String(),
  workflow_id: Type.String(),
  state: RunStateSchema,
  failure_reason: Nullable(OneOf(FAILURE_REASONS)),
});
export type SweepRun = Static<typeof SweepRun>;

export const Sweep = Type.Object(
  {
    id: Uuid,
    experiment_id: Uuid,
    workflow_id: Type.String(),
    workflow_url: Nullable(Type.String()),
    concurrency: Type.Integer(),
    created_at: Timestamp,
    runs: Type.Array(SweepRun),
    progress: SweepRunCounts,
  },
  { $id: 'Sweep' },
);
export type Sweep = Static<typeof Sweep>;

export const SweepParams = Type.Object({ id: Uuid, sweep_id: Uuid });
