import { hashSecret, mintToken, parseToken } from '../auth/api-key-token.ts';
import { ORCHESTRATOR_SCOPES } from '../auth/scopes.ts';
import {
  findKeyWithHash,
  insertKey,
  insertPresharedKey,
  revokeKeyById,
  revokeUserKeysExcept,
} from '../api-keys/api-key-repository.ts';
import { ConfigError } from '../../settings/config-error.ts';
import type { Db, Queryable } from '../db/database.ts';
import { ORCHESTRATOR_USER_ID } from '../auth/orchestrator-user.ts';

/**
 * A well-formed orchestrator key, made offline: the operator puts the same value in the service's and the
 * standalone worker's ASSAY_ORCHESTRATOR_KEY, and the service stores its hash at start.
 */
export function generateOrchestratorKey(): string {
  return mintToken('agent').token;
}

/**
 * Stores the pre-shared ASSAY_ORCHESTRATOR_KEY for the orchestrator user (idempotent: every replica does it
 * at every start). A stored key with the same id but another secret or owner stops the start: it cannot
 * be ours.
 */
export async function storeOrchestratorKey(db: Queryable, token: string): Promise<void> {
  const parsed = parseToken(token);
  if (parsed?.kind !== 'agent')
    throw new ConfigError('ASSAY_ORCHESTRATOR_KEY must be an agent key (sk_agent_…)');
  const secretHash = hashSecret(parsed.secret);
  await insertPresharedKey(db, {
    id: parsed.id,
    userId: ORCHESTRATOR_USER_ID,
    description: 'orchestrator (ASSAY_ORCHESTRATOR_KEY)',
    scopes: ORCHESTRATOR_SCOPES,
    secretHash,
  });
  const stored = await findKeyWithHash(db, parsed.id, secretHash);
  if (!stored || !stored.same_secret || stored.user_id !== ORCHESTRATOR_USER_ID || stored.kind !== 'agent') {
    throw new ConfigError(
      `ASSAY_ORCHESTRATOR_KEY: a different key with the same id (${parsed.id}) is already stored; generate a new orchestrator key and give it to the service and its workers`,
    );
  }
}

/**
 * Makes the configured key the only orchestrator key (none configured: no key at all), so a rotated-out or
 * leaked ASSAY_ORCHESTRATOR_KEY, or the key of an embedded worker whose process died, stops working at the
 * next start. Runs before this process mints its own embedded key; answers the ids it revoked.
 */
export async function revokeOtherOrchestratorKeys(
  db: Queryable,
  token: string | undefined,
): Promise<string[]> {
  const keepId = token ? (parseToken(token)?.id ?? null) : null;
  return revokeUserKeysExcept(db, ORCHESTRATOR_USER_ID, keepId);
}

/**
 * Mints a fresh orchestrator key for the embedded server's in-process worker (no expiry: it lives as long as
 * the process); the caller revokes it on close.
 */
export async function mintEmbeddedOrchestratorKey(
  db: Db,
): Promise<{ token: string; revoke(): Promise<void> }> {
  const { row, token } = await insertKey(db, {
    userId: ORCHESTRATOR_USER_ID,
    kind: 'agent',
    description: 'embedded worker',
    scopes: ORCHESTRATOR_SCOPES,
    runId: null,
    ttlDays: null,
    mintedByKeyId: null,
  });
  return {
    token,
    async revoke() {
      await revokeKeyById(db, row.id);
    },
  };
}
