/** What a key may do. A key never holds a scope its owner lacks, and a minted key never exceeds its minter. */
export const SCOPES = [
  'experiments:read',
  'experiments:write',
  'runs:read',
  'runs:write',
  'assets:read',
  'assets:write',
  'search:read',
  'api_keys:write',
  'organizations:write',
  'admin',
] as const;

export type Scope = (typeof SCOPES)[number];

/** Every scope but `admin`: what an ordinary user (and their identity-provider token) holds. */
export const USER_SCOPES: readonly Scope[] = SCOPES.filter((s) => s !== 'admin');

/** A worker key reaches only its own run: read its config, move it, upload and read its assets. */
export const WORKER_SCOPES: readonly Scope[] = ['runs:read', 'runs:write', 'assets:read', 'assets:write'];

export function scopesOfUser(isAdmin: boolean): readonly Scope[] {
  return isAdmin ? SCOPES : USER_SCOPES;
}

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}
