import { Type, type Static } from 'typebox';
import { Nullable, OneOf, Timestamp, Uuid } from './common.ts';
import { FAILURE_REASONS, RunStateSchema } from './runs.ts';

export const CreateSweepBody = Type.Object(
  {
    base_yaml: Type.String({
      maxLength: 1_000_000,
      description: 'the base variation config, YAML as POST …/variations takes it',
    }),
    grid: Type.Optional(
      Type.Record(Type.String(), Type.Array(Type.Unknown()), {
        description: 'dotted path → values; every combination, in key order',
      }),
    ),
    list: Type.Optional(
      Type.Array(Type.Record(Type.String(), Type.Unknown()), {
        description: 'one variation per entry of dotted path → value',
      }),
    ),
    concurrency: Type.Optional(Type.Integer({ minimum: 1, maximum: 64, default: 4 })),
    name_prefix: Type.Optional(Type.String({ minLength: 1, maxLength: 100, default: 'sweep' })),
  },
  { additionalProperties: false },
);
export type CreateSweepBody = Static<typeof CreateSweepBody>;

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
