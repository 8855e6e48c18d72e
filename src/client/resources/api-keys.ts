import type { ApiKey, ApiKeyKind, CreatedApiKey, Scope } from '@assay/contract';
import { path } from '../core/path.ts';
import type { Transport } from '../core/transport.ts';
import type { RunRef } from './assets.ts';

export type { ApiKeyKind, CreatedApiKey, Scope } from '@assay/contract';

/** A key as the service lists it, never with its secret (the contract's ApiKey). */
export type ApiKeyData = ApiKey;

/** The API-keys namespace: mint restricted keys, list them, revoke them. */
export class ApiKeys {
  readonly #t: Transport;

  constructor(transport: Transport) {
    this.#t = transport;
  }

  /** Mints a key holding at most the caller's scopes; a worker key is bound to one run. */
  create(params: {
    description: string;
    scopes: Scope[];
    kind?: ApiKeyKind;
    expiresInDays?: number;
    run?: RunRef;
  }): Promise<CreatedApiKey> {
    const run = params.run && { experiment_id: params.run.experimentId, n: params.run.n, r: params.run.r };
    return this.#t.post('/api-keys', {
      description: params.description,
      scopes: params.scopes,
      kind: params.kind,
      expires_in_days: params.expiresInDays,
      run,
    });
  }

  async list(): Promise<ApiKeyData[]> {
    return (await this.#t.get<{ items: ApiKeyData[] }>('/api-keys')).items;
  }

  /** Revokes at once; the key answers 401 from then on. */
  revoke(id: string): Promise<ApiKeyData> {
    return this.#t.request('DELETE', path`/api-keys/${id}`);
  }
}
