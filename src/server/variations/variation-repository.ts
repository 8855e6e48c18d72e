import type { LaunchAuthor } from '@assay/contract';
import type { Queryable, Tx } from '../db/database.ts';
import { experimentVisible } from '../organizations/organization-repository.ts';
import type { SplitConfig } from './config-yaml.ts';

export interface VariationRow extends SplitConfig {
  experiment_id: string;
  n: number;
  name: string;
  config_yaml: string;
  created_at: Date;
}

const COLUMNS =
  'v.experiment_id, v.n, v.name, v.config_yaml, v.config_json, v.accelerate_config_json, v.launch_config, v.created_at';

/**
 * Takes the next number from the experiment's counter: the UPDATE locks the experiment row, so concurrent
 * creations queue up, and a rolled-back insert gives its number back (no gaps, no duplicates).
 */
export async function insertVariation(
  tx: Tx,
  userId: string,
  experimentId: string,
  input: { name: string | undefined; configYaml: string; config: SplitConfig },
): Promise<VariationRow | undefined> {
  const [counter] = await tx.query<{ n: number }>(
    `UPDATE experiments e SET next_variation_n = e.next_variation_n + 1, updated_at = now()
      WHERE e.id = $2 AND e.state = 'draft' AND ${experimentVisible('e', '$1')}
      RETURNING e.next_variation_n - 1 AS n`,
    [userId, experimentId],
  );
  if (!counter) return undefined;
  const rows = await tx.query<VariationRow>(
    `INSERT INTO variations AS v (experiment_id, n, name, config_yaml, config_json, accelerate_config_json, launch_config, launch_author)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING ${COLUMNS}`,
    [
      experimentId,
      counter.n,
      input.name ?? `v${counter.n}`,
      input.configYaml,
      input.config.config_json,
      input.config.accelerate_config_json,
      input.config.launch_config,
      userId,
    ],
  );
  return rows[0];
}

/** An edit that changes the launch block makes the editor its author; one that leaves it alone does not. */
export async function updateDraftVariation(
  db: Queryable,
  userId: string,
  experimentId: string,
  n: number,
  patch: { name?: string; configYaml?: string; config?: SplitConfig },
): Promise<VariationRow | undefined> {
  const rows = await db.query<VariationRow>(
    `UPDATE variations v SET name = COALESCE($4, v.name), config_yaml = COALESCE($5, v.config_yaml),
            config_json = COALESCE($6, v.config_json), accelerate_config_json = COALESCE($7, v.accelerate_config_json),
            launch_config = COALESCE($8, v.launch_config),
            launch_author = CASE WHEN $8::jsonb IS DISTINCT FROM v.launch_config AND $8::jsonb IS NOT NULL
                                 THEN $1::uuid ELSE v.launch_author END
       FROM experiments e
      WHERE e.id = v.experiment_id AND v.experiment_id = $2 AND v.n = $3 AND e.state = 'draft' AND ${experimentVisible('e', '$1')}
      RETURNING ${COLUMNS}`,
    [
      userId,
      experimentId,
      n,
      patch.name ?? null,
      patch.configYaml ?? null,
      patch.config?.config_json ?? null,
      patch.config?.accelerate_config_json ?? null,
      patch.config?.launch_config ?? null,
    ],
  );
  return rows[0];
}

export async function findVariation(
  db: Queryable,
  userId: string,
  experimentId: string,
  n: number,
): Promise<VariationRow | undefined> {
  const rows = await db.query<VariationRow>(
    `SELECT ${COLUMNS} FROM variations v JOIN experiments e ON e.id = v.experiment_id
      WHERE v.experiment_id = $2 AND v.n = $3 AND ${experimentVisible('e', '$1')}`,
    [userId, experimentId, n],
  );
  return rows[0];
}

export async function listVariations(db: Queryable, experimentId: string): Promise<VariationRow[]> {
  return db.query<VariationRow>(
    `SELECT ${COLUMNS} FROM variations v WHERE v.experiment_id = $1 ORDER BY v.n`,
    [experimentId],
  );
}

/** A visible variation's launch block and who last wrote it (null: unknown), for a provisioning decision. */
export async function findLaunchAndAuthor(
  db: Queryable,
  userId: string,
  experimentId: string,
  n: number,
): Promise<{ launch_config: Record<string, unknown>; launch_author: LaunchAuthor | null } | undefined> {
  const rows = await db.query<{ launch_config: Record<string, unknown>; launch_author: LaunchAuthor | null }>(
    `SELECT v.launch_config,
            CASE WHEN a.id IS NULL THEN NULL
                 ELSE json_build_object('id', a.id, 'email', a.email, 'is_admin', a.is_admin)
            END AS launch_author
       FROM variations v JOIN experiments e ON e.id = v.experiment_id
       LEFT JOIN users a ON a.id = v.launch_author
      WHERE v.experiment_id = $2 AND v.n = $3 AND ${experimentVisible('e', '$1')}`,
    [userId, experimentId, n],
  );
  return rows[0];
}
