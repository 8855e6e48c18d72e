import type { FastifyBaseLogger } from 'fastify';
import type { Principal } from '../auth/principal.ts';
import type { Db } from '../db/database.ts';
import { conflict, notFound } from '../http/errors.ts';
import type { ObjectStorage } from '../storage/object-storage.ts';
import { uploadKey } from '../storage/storage-keys.ts';
import * as repo from './experiment-delete-repository.ts';

/**
 * DELETE /experiments/{id}: a draft goes with everything under it; any other state is 409
 * `experiment_not_draft` (what was committed is the record), and a draft another experiment names as its
 * parent is 409 `experiment_has_children` (its lineage would lose an edge). The rows go in one transaction;
 * the assets' bytes are deleted once it committed, so a failed delete leaves every row and every byte. A
 * byte that fails to go then is logged with its key: the asset rows are gone, so nothing can reach it.
 */
export async function deleteExperiment(
  db: Db,
  storage: ObjectStorage,
  principal: Principal,
  id: string,
  log: FastifyBaseLogger,
): Promise<void> {
  const components = await db.transaction(async (tx) => {
    const found = await repo.lockForDelete(tx, principal.userId, id);
    if (!found) throw notFound('experiment');
    if (found.state !== 'draft')
      throw conflict(
        'experiment_not_draft',
        `only a draft experiment can be deleted; this one is ${found.state}`,
        { state: found.state },
      );
    if (found.children > 0)
      throw conflict(
        'experiment_has_children',
        `${found.children} experiment(s) name this draft as a parent; delete or keep them first`,
        { children: found.children },
      );
    return repo.deleteExperimentTree(tx, id);
  });
  // Each component's key, and its upload key (a pending or abandoned upload's bytes and parts).
  for (const c of components) {
    for (const [key, o] of [
      [c.storage_key, {}],
      [uploadKey(c.storage_key), { uploadId: c.upload_id }],
    ] as const) {
      await storage.deleteObject(key, o).catch((error: unknown) => {
        log.warn({ err: error, key }, 'a deleted experiment left an object in storage');
      });
    }
  }
}
