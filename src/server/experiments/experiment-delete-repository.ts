import type { Tx } from '../db/database.ts';
import { experimentVisible } from '../organizations/organization-repository.ts';

/** Where a deleted asset's bytes were: each component's key, and its multipart upload if one never completed. */
export interface StoredComponent {
  storage_key: string;
  upload_id: string | null;
}

/**
 * The experiment's state and how many experiments name it as a parent, its row locked until the transaction
 * ends (a commit racing the delete waits, then finds nothing); undefined when the caller cannot see it.
 */
export async function lockForDelete(
  tx: Tx,
  userId: string,
  id: string,
): Promise<{ state: string; children: number } | undefined> {
  const rows = await tx.query<{ state: string; children: number }>(
    `SELECT e.state, (SELECT count(*)::int FROM experiment_parents p WHERE p.parent_id = e.id) AS children
       FROM experiments e WHERE e.id = $2 AND ${experimentVisible('e', '$1')} FOR UPDATE OF e`,
    [userId, id],
  );
  return rows[0];
}

/**
 * Deletes the experiment and everything under it: variations, runs, their metrics and assets (rows only;
 * answers where the assets' bytes are, for the caller to delete once this commits). The metric points and
 * blocks have no foreign key (006_metrics.sql), so they go first, by their series; the rest cascades from
 * the runs and the experiment. A draft has no runs and no sweeps (runs need a commit, a sweep commits), but
 * rows put there some other way are deleted too rather than left to fail the statement.
 */
export async function deleteExperimentTree(tx: Tx, id: string): Promise<StoredComponent[]> {
  const components = await tx.query<StoredComponent>(
    `SELECT c.storage_key, c.upload_id FROM asset_components c JOIN assets a ON a.id = c.asset_id
      WHERE a.experiment_id = $1 OR a.run_id IN (SELECT r.id FROM runs r WHERE r.experiment_id = $1)`,
    [id],
  );
  const series = `SELECT s.id FROM metric_series s JOIN runs r ON r.id = s.run_id WHERE r.experiment_id = $1`;
  for (const table of ['metric_points', 'metric_blocks', 'metric_fine_blocks'])
    await tx.query(`DELETE FROM ${table} WHERE series_id IN (${series})`, [id]);
  await tx.query(
    `DELETE FROM sweep_rungs WHERE sweep_id IN (SELECT s.id FROM sweeps s WHERE s.experiment_id = $1)`,
    [id],
  );
  await tx.query('DELETE FROM runs WHERE experiment_id = $1', [id]);
  await tx.query('DELETE FROM variations WHERE experiment_id = $1', [id]);
  await tx.query('DELETE FROM sweeps WHERE experiment_id = $1', [id]);
  await tx.query('DELETE FROM experiments WHERE id = $1', [id]);
  return components;
}
