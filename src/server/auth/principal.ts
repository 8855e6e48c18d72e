import type { Scope } from '@assay/contract';

/**
 * Who is calling, resolved from the bearer token; every query is scoped by `userId` (and `runId`
 * for workers).
 */
export interface Principal {
  readonly userId: string;
  readonly via: 'jwt' | 'user' | 'agent' | 'worker';
  readonly keyId: string | null;
  readonly scopes: ReadonlySet<Scope>;
  readonly isAdmin: boolean;
  /** Set for worker keys: the only run the key may touch. */
  readonly runId: string | null;
}
