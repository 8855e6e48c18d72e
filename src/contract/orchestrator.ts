import { Type, type Static } from 'typebox';
import { Uuid, ItemList, OneOf } from './common.ts';
import { RunAssetSummary } from './assets.ts';
import { LaunchConfig } from './launch.ts';
import { ORCHESTRATOR_FAILURE_REASONS, Run } from './runs.ts';

/** The /orchestrator/* calls, made by the workflows' activities with the orchestrator's key. */
export const ManagedRunParams = Type.Object({ run_id: Uuid });

/** A managed run as its workflow needs it: the run, its variation's launch block, and who provisioned it. */
export const ManagedRun = Type.Object({
  run: Run,
  launch_config: LaunchConfig,
  provisioned_by_admin: Type.Boolean({
    description:
      'whether the user who provisioned the run is an admin (some compute providers serve admins only)',
  }),
});
export type ManagedRun = Static<typeof ManagedRun>;

/** A freshly minted worker key: the full key is returned once, to be injected into the instance. */
export const WorkerKey = Type.Object({ id: Uuid, key: Type.String() });
export type WorkerKey = Static<typeof WorkerKey>;

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
