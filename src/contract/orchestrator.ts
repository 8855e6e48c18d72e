import { Type, type Static } from 'typebox';
import { JsonObject, Uuid, ItemList, Nullable, OneOf, Timestamp } from './common.ts';
import { RunAssetSummary } from './assets.ts';
import { LaunchAuthor, LaunchConfig } from './launch.ts';
import { ORCHESTRATOR_FAILURE_REASONS, Run, RunQueuePlace } from './runs.ts';

/** The /orchestrator/* calls, made by the workflows' activities with the orchestrator's key. */
export const ManagedRunParams = Type.Object({ run_id: Uuid });

/** Where this deployment's workflows go; `assay worker` asks for it, so it polls the service's own queue. */
export const OrchestratorDeployment = Type.Object({
  installation_id: Uuid,
  namespace: Type.String(),
  task_queue: Type.String({
    description: 'ASSAY_TASK_QUEUE when the operator set one, else `assay-<installation_id>`',
  }),
});
export type OrchestratorDeployment = Static<typeof OrchestratorDeployment>;

/** A managed run as its workflow needs it: the run, its variation's launch block, and who provisioned it. */
export const ManagedRun = Type.Object({
  run: Run,
  launch_config: LaunchConfig,
  provisioned_by_admin: Type.Boolean({
    description:
      'whether the user who provisioned the run is an admin (some compute providers serve admins only)',
  }),
  /** Who last wrote the variation's launch block; null when that predates authorship records. */
  launch_author: Nullable(LaunchAuthor),
});
export type ManagedRun = Static<typeof ManagedRun>;

/**
 * A one-time exchange token for a run's instance: its runner trades it for the run's worker key
 * (POST /worker-keys/exchange), so no worker key ever sits in user data or in Temporal's history.
 */
export const ExchangeToken = Type.Object({ id: Uuid, token: Type.String(), expires_at: Timestamp });
export type ExchangeToken = Static<typeof ExchangeToken>;

/** The worker key an exchange token bought: the full key is returned once. */
export const ExchangedWorkerKey = Type.Object({ id: Uuid, key: Type.String(), run_id: Uuid });
export type ExchangedWorkerKey = Static<typeof ExchangedWorkerKey>;

export const RevokedWorkerKeys = Type.Object({ revoked: Type.Integer() });

const Text = Type.String({ minLength: 1, maxLength: 500 });
/** The instance a run was provisioned on. */
export const RunInstance = Type.Object(
  { provider: Text, instance_id: Text, state: Text },
  { additionalProperties: false },
);
export type RunInstance = Static<typeof RunInstance>;

export const FailManagedRunBody = Type.Object(
  {
    reason: OneOf(ORCHESTRATOR_FAILURE_REASONS),
    message: Type.Optional(Type.String({ maxLength: 10_000 })),
  },
  { additionalProperties: false },
);
export type FailManagedRunBody = Static<typeof FailManagedRunBody>;

export const RunAssetList = ItemList(RunAssetSummary);

/** A sweep's trials, for the trial sweep workflow's activities. */
export const SweepTrialParams = Type.Object({ sweep_id: Uuid });

/** The trial the sampler suggested: a variation and a run are made for it, once per (sweep, trial). */
export const CreateTrialBody = Type.Object(
  { trial: Type.Integer({ minimum: 1 }), params: JsonObject },
  { additionalProperties: false },
);
export type CreateTrialBody = Static<typeof CreateTrialBody>;

/** A trial as the sampler sees it (workflows/sweep-types.ts TrialRecord). */
export const SweepTrialRecord = Type.Object({
  trial: Type.Integer(),
  params: JsonObject,
  state: OneOf(['complete', 'pruned', 'failed', 'running'] as const),
  value: Nullable(Type.Number()),
  /** [step, value] pairs. */
  intermediate: Type.Array(Type.Array(Type.Number(), { minItems: 2, maxItems: 2 })),
});
export type SweepTrialRecord = Static<typeof SweepTrialRecord>;
export const SweepTrialHistory = ItemList(SweepTrialRecord);
export type SweepTrialHistory = Static<typeof SweepTrialHistory>;

/** How many never-started runs of a cancelled sweep were failed `abandoned`. */
export const AbandonedRuns = Type.Object({ abandoned: Type.Integer() });
export type AbandonedRuns = Static<typeof AbandonedRuns>;

/**
 * The run's place in the `local` compute queue, as its saga asks for it before provisioning: `granted` with
 * the GPU ids it holds, `waiting` with its place, or `ended` (no longer pending: nothing to start).
 */
export const ComputeSlot = Type.Object({
  state: OneOf(['granted', 'waiting', 'ended'] as const),
  queued: Type.Boolean({
    description:
      'whether the run went through the queue (false on providers that take none): release it at the end',
  }),
  gpu_ids: Nullable(
    Type.Array(Type.Integer({ minimum: 0 }), {
      description: 'the GPUs granted (its CUDA_VISIBLE_DEVICES); null where the machine has no GPU slots',
    }),
  ),
  queue: Nullable(RunQueuePlace),
});
export type ComputeSlot = Static<typeof ComputeSlot>;

/** Whether the run was still in the compute queue when it left it. */
export const ReleasedSlot = Type.Object({ released: Type.Boolean() });
export type ReleasedSlot = Static<typeof ReleasedSlot>;
