import type { CreateApiKeyBody } from '@assay/contract';
import type { Principal } from '../auth/principal.ts';
import { WORKER_SCOPES } from '../auth/scopes.ts';
import type { Db } from '../db/database.ts';
import { badRequest, forbidden, notFound } from '../http/errors.ts';
import { iso } from '../http/schemas.ts';
import { getRun } from '../runs/run-service.ts';
import * as repo from './api-key-repository.ts';

export function toApi(row: repo.ApiKeyRow) {
  return {
    id: row.id,
    kind: row.kind,
    description: row.description,
    scopes: row.scopes,
    run_id: row.run_id,
    created_at: iso(row.created_at)!,
    expires_at: iso(row.expires_at),
    last_used_at: iso(row.last_used_at),
    revoked_at: iso(row.revoked_at),
  };
}

/**
 * What a caller asks for when minting (the contract's CreateApiKeyBody), scopes checked here, not by type.
 */
export type MintRequest = Omit<CreateApiKeyBody, 'scopes'> & { scopes: string[] };

/** Mints a key for the caller's own user; it never holds a scope the caller lacks (least privilege). */
export async function mintKey(db: Db, principal: Principal, input: MintRequest, defaultTtlDays: number) {
  const kind = input.kind ?? 'user';
  const scopes = [...new Set(input.scopes)];
  const excess = scopes.filter((s) => !principal.scopes.has(s as never));
  if (excess.length > 0)
    throw forbidden('scope_escalation', `a key cannot receive scopes its minter lacks: ${excess.join(', ')}`);
  let runId: string | null = null;
  if (kind === 'worker') {
    if (!input.run)
      throw badRequest('run_required', 'a worker key is bound to a run: give run {experiment_id, n, r}');
    const outside = scopes.filter((s) => !WORKER_SCOPES.includes(s as never));
    if (outside.length > 0)
      throw badRequest(
        'invalid_scopes',
        `worker keys may hold only ${WORKER_SCOPES.join(', ')}; not ${outside.join(', ')}`,
      );
    runId = (
      await getRun(db, principal, { experimentId: input.run.experiment_id, n: input.run.n, r: input.run.r })
    ).id;
  } else if (input.run) {
    throw badRequest('run_not_allowed', 'only worker keys are bound to a run');
  }
  const { row, token } = await repo.insertKey(db, {
    userId: principal.userId,
    kind,
    description: input.description,
    scopes,
    runId,
    ttlDays: input.expires_in_days ?? defaultTtlDays,
    mintedByKeyId: principal.keyId,
  });
  return { ...toApi(row), key: token };
}

export async function listKeys(db: Db, principal: Principal) {
  return { items: (await repo.listKeys(db, principal.userId)).map(toApi) };
}

/**
 * Whether the caller may revoke the user's key `id`. The user themself may revoke any of their keys: with an
 * access token, with a key minted by no other key (their first key, or one minted with an access token), or
 * with an admin key. Any other key reaches only itself and the keys minted from it, so a narrow key handed to
 * a tool cannot cut off the key it came from.
 */
async function assertMayRevoke(db: Db, principal: Principal, id: string): Promise<void> {
  if (!principal.keyId || principal.scopes.has('admin')) return;
  const reach = await repo.revocationReach(db, { userId: principal.userId, keyId: principal.keyId }, id);
  if (!reach.owned) throw notFound('API key');
  if (!reach.callerIsRoot && !reach.inLineage)
    throw forbidden(
      'key_outside_lineage',
      'this key may revoke only itself and the keys minted from it; revoke others with your first key, an access token or an admin key',
    );
}

/**
 * Revokes the caller's key and every key minted from it; `revokedIds` lets the caller drop them all from the
 * auth cache.
 */
export async function revoke(db: Db, principal: Principal, id: string) {
  await assertMayRevoke(db, principal, id);
  const [root, ...descendants] = await repo.revokeKeyLineage(db, principal.userId, id);
  if (!root) throw notFound('API key');
  return { key: toApi(root), revokedIds: [root.id, ...descendants.map((d) => d.id)] };
}
