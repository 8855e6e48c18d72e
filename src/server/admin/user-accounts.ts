import { ADMIN_SCOPES, USER_SCOPES } from '../auth/scopes.ts';
import type { Db, Tx } from '../db/database.ts';
import { insertKey } from '../api-keys/api-key-repository.ts';
import { conflict } from '../http/errors.ts';
import { iso } from '../http/schemas.ts';
import { toApi as keyToApi } from '../api-keys/api-key-service.ts';
import { claimBootstrapAdmin, insertUser, recordBootstrapAdmin } from './user-repository.ts';

interface NewUser {
  email: string;
  name?: string;
  isAdmin: boolean;
  ttlDays: number;
}

/** Creates a user and a first key holding every scope the user has (all of them for an admin). */
export async function createUserWithKey(db: Db, input: NewUser) {
  return db.transaction((tx) => insertUserWithKey(tx, input));
}

async function insertUserWithKey(tx: Tx, input: NewUser) {
  const user = await insertUser(tx, { email: input.email, name: input.name ?? null, isAdmin: input.isAdmin });
  if (!user) throw conflict('email_taken', `a user with email ${input.email} already exists`);
  const { row, token } = await insertKey(tx, {
    userId: user.id,
    kind: 'user',
    description: input.isAdmin ? 'bootstrap admin key' : 'first key, minted by an admin',
    scopes: input.isAdmin ? ADMIN_SCOPES : USER_SCOPES,
    runId: null,
    ttlDays: input.ttlDays,
    mintedByKeyId: null,
  });
  return {
    user: { ...user, created_at: iso(user.created_at)! },
    api_key: { ...keyToApi(row), key: token },
  };
}

/**
 * On the first start against an empty database, creates the admin and hands its key to `handOver` before
 * anything commits. One transaction holds the claim, the user, the key and the hand-over: a crash or failure
 * anywhere leaves no claim behind, so the next start bootstraps again. The claim row makes it happen once
 * even with several replicas starting together (the others wait on its unique key, then find it taken).
 */
export async function bootstrapAdminOnce(
  db: Db,
  ttlDays: number,
  handOver: (key: string) => Promise<void>,
): Promise<string | undefined> {
  return db.transaction(async (tx) => {
    if (!(await claimBootstrapAdmin(tx))) return undefined;
    const { user, api_key } = await insertUserWithKey(tx, {
      email: 'admin@localhost',
      name: 'Bootstrap admin',
      isAdmin: true,
      ttlDays,
    });
    await recordBootstrapAdmin(tx, { user_id: user.id, key_id: api_key.id });
    await handOver(api_key.key);
    return api_key.key;
  });
}
