import { listKeys, revokeKeyLineage } from '../api-keys/api-key-repository.ts';
import { toApi } from '../api-keys/api-key-service.ts';
import type { Db } from '../db/database.ts';
import { notFound } from '../http/errors.ts';
import { ORCHESTRATOR_USER_ID } from '../auth/orchestrator-user.ts';

/** Every key of the orchestrator user: the configured one, embedded workers' keys, and revoked ones. */
export async function listOrchestratorKeys(db: Db) {
  return { items: (await listKeys(db, ORCHESTRATOR_USER_ID)).map(toApi) };
}

/**
 * Revokes an orchestrator key at once, with the worker keys it minted: an operator revoking one by hand
 * suspects it leaked, and its holder could have minted those. Keys of other users answer 404 like
 * unknown ids.
 */
export async function revokeOrchestratorKey(db: Db, id: string) {
  const [root, ...descendants] = await revokeKeyLineage(db, ORCHESTRATOR_USER_ID, id);
  if (!root) throw notFound('orchestrator key');
  return { key: toApi(root), revokedIds: [root.id, ...descendants.map((d) => d.id)] };
}
