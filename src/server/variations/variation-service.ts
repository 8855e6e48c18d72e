import type { LaunchConfig, Variation } from '@assay/contract';
import type { Principal } from '../auth/principal.ts';
import type { Db } from '../db/database.ts';
import { conflict, notFound } from '../http/errors.ts';
import { iso } from '../http/schemas.ts';
import { getVisibleExperiment } from '../experiments/experiment-service.ts';
import type { ConfigPolicy } from './config-policy.ts';
import { splitConfigYaml } from './config-yaml.ts';
import { checkLaunchPolicy } from './launch-policy.ts';
import * as repo from './variation-repository.ts';

export function toApi(row: repo.VariationRow): Variation {
  return {
    experiment_id: row.experiment_id,
    n: row.n,
    name: row.name,
    config_yaml: row.config_yaml,
    config_json: row.config_json,
    accelerate_config_json: row.accelerate_config_json,
    // Checked against the contract's LaunchConfig when the variation was created or edited.
    launch_config: row.launch_config as LaunchConfig,
    created_at: iso(row.created_at)!,
  };
}

async function frozen(db: Db, principal: Principal, experimentId: string): Promise<never> {
  const experiment = await getVisibleExperiment(db, principal, experimentId);
  throw conflict(
    'variations_frozen',
    `variations are frozen once the experiment is committed; this one is ${experiment.state}`,
    { state: experiment.state },
  );
}

export async function createVariation(
  db: Db,
  principal: Principal,
  experimentId: string,
  input: { config_yaml: string; name?: string },
  policy: ConfigPolicy,
) {
  const config = splitConfigYaml(input.config_yaml, policy.maxConfigBytes);
  checkLaunchPolicy(config, policy);
  const row = await db.transaction((tx) =>
    repo.insertVariation(tx, principal.userId, experimentId, {
      name: input.name,
      configYaml: input.config_yaml,
      config,
    }),
  );
  return row ? toApi(row) : frozen(db, principal, experimentId);
}

export async function editVariation(
  db: Db,
  principal: Principal,
  experimentId: string,
  n: number,
  input: { config_yaml?: string; name?: string },
  policy: ConfigPolicy,
) {
  const config =
    input.config_yaml === undefined ? undefined : splitConfigYaml(input.config_yaml, policy.maxConfigBytes);
  if (config) checkLaunchPolicy(config, policy);
  const row = await repo.updateDraftVariation(db, principal.userId, experimentId, n, {
    name: input.name,
    configYaml: input.config_yaml,
    config,
  });
  if (row) return toApi(row);
  await getVariation(db, principal, experimentId, n);
  return frozen(db, principal, experimentId);
}

export async function getVariation(db: Db, principal: Principal, experimentId: string, n: number) {
  const row = await repo.findVariation(db, principal.userId, experimentId, n);
  if (!row) throw notFound('variation');
  return toApi(row);
}

export async function listVariations(db: Db, principal: Principal, experimentId: string) {
  await getVisibleExperiment(db, principal, experimentId);
  return { items: (await repo.listVariations(db, experimentId)).map(toApi) };
}
