import { path } from '../core/path.ts';
import type { Transport } from '../core/transport.ts';

export interface ApiKeyData {
  id: string;
  kind: 'user' | 'agent' | 'worker';
  description: string;
  scopes: string[];
  run_id: string | null;
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
  revoked_at: string | null;
}

export interface CreatedApiKey extends ApiKeyData {
  /** The full key: returned once, store it now. */
  key: string;
}

/** The API-keys namespace: mint restricted keys, list them, revoke them. */
export class ApiKeys {
  readonly #t: Transport;

  constructor(transport: Transport) {
    this.#t = transport;
  }

  /** Mints a key holding at most the caller's scopes; a worker key is bound to one run. */
  create(params: {
    description: string;
    scopes: string[];
    kind?: 'user' | 'agent' | 'worker';
    expiresInDays?: number;
    run?: { experimentId: string; n: number; r: number };
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
