import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { loadConfig } from '../../src/server/config.ts';
import type { Orchestrator } from '../../src/orchestrator/orchestrator.ts';
import { createService, type Service } from '../../src/server/service.ts';
import { freePort } from './free-port.ts';
import { createTestDatabase } from './postgres.ts';
import { s3StorageEnv, startSeaweedFs, type SeaweedFs } from './seaweedfs.ts';

export interface Reply<T = any> {
  status: number;
  body: T;
  headers: Record<string, string | string[] | number | undefined>;
}

export interface Api {
  request<T = any>(
    method: string,
    url: string,
    opts?: { key?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> },
  ): Promise<Reply<T>>;
  /** Calls made with one key; `body` is sent as JSON. */
  as(key: string): {
    get<T = any>(url: string): Promise<Reply<T>>;
    post<T = any>(url: string, body?: unknown): Promise<Reply<T>>;
    patch<T = any>(url: string, body?: unknown): Promise<Reply<T>>;
    put<T = any>(url: string, body?: unknown): Promise<Reply<T>>;
    delete<T = any>(url: string): Promise<Reply<T>>;
  };
}

export interface TestService extends Api {
  service: Service;
  /** Base URL when started with `listen: true` (presigned local-storage URLs point here). */
  url: string | undefined;
  adminKey: string;
  /** The PostgreSQL database of this service (undefined on PGlite); a replica shares it. */
  databaseUrl: string | undefined;
  /** Everything the service logged, one JSON line each. */
  logs: string[];
  /** The SeaweedFS behind `{ storage: 's3' }`, for tests that reach the store around the service. */
  seaweed: SeaweedFs | undefined;
  /** Creates a user through the admin API and returns their id, email and first key. */
  createUser(email?: string): Promise<{ id: string; email: string; key: string }>;
  close(): Promise<void>;
}

let userCounter = 0;

/**
 * Starts the real service for a test file: a fresh PostgreSQL database (or PGlite in a temp directory with
 * `{ pglite: true }`), migrations, the bootstrap admin, and the Fastify app driven with `inject`.
 * `{ replicaOf }` starts a second service instance on the same PostgreSQL database (its own app and auth
 * cache, the primary's admin key); closing a replica leaves the database to the primary. `{ orchestrator }`
 * is handed to the service (a FakeOrchestrator, or a real one on a Temporal dev server); the caller
 * closes it.
 */
export async function startTestService(
  opts: {
    pglite?: boolean;
    env?: Record<string, string>;
    replicaOf?: TestService;
    listen?: boolean;
    storage?: 'local' | 's3';
    orchestrator?: Orchestrator;
    /** With `listen`: this port (a restarted service where its clients expect it) instead of a free one. */
    port?: number;
  } = {},
): Promise<TestService> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'assay-test-'));
  if (opts.replicaOf && !opts.replicaOf.databaseUrl)
    throw new Error('a replica needs a primary on PostgreSQL');
  const database = opts.pglite || opts.replicaOf ? undefined : await createTestDatabase();
  const databaseUrl = opts.replicaOf?.databaseUrl ?? database?.url;
  // Upload URLs of the local store point at the service itself, so a test that moves bytes listens on a
  // real port.
  const seaweed: SeaweedFs | undefined = opts.storage === 's3' ? await startSeaweedFs() : undefined;
  const port = opts.listen || opts.storage ? (opts.port ?? (await freePort())) : undefined;
  const env: Record<string, string> = { ASSAY_DATA_DIR: dataDir, ASSAY_LOG_LEVEL: 'info' };
  if (databaseUrl) env.DATABASE_URL = databaseUrl;
  if (port) Object.assign(env, { PORT: String(port), ASSAY_PUBLIC_URL: `http://127.0.0.1:${port}` });
  if (seaweed) {
    Object.assign(env, s3StorageEnv(seaweed));
  }
  const config = loadConfig({ ...env, ...opts.env });
  const logs: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      logs.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  const service = await createService(config, {
    logger: { level: 'info', stream } as never,
    orchestrator: opts.orchestrator,
  });
  const adminKey = opts.replicaOf?.adminKey ?? service.bootstrapKey;
  if (!adminKey) throw new Error('a fresh database must yield a bootstrap admin key');
  const api = apiFor(service);
  if (port) await service.app.listen({ host: '127.0.0.1', port });
  return {
    ...api,
    service,
    url: port ? `http://127.0.0.1:${port}` : undefined,
    adminKey,
    databaseUrl,
    logs,
    seaweed,
    async createUser(email = `user${++userCounter}.${process.pid}.${Date.now()}@example.test`) {
      const res = await api.as(adminKey).post('/admin/users', { email });
      if (res.status !== 201) throw new Error(`createUser: ${res.status} ${JSON.stringify(res.body)}`);
      return { id: res.body.user.id, email, key: res.body.api_key.key };
    },
    async close() {
      await service.close();
      await seaweed?.stop();
      await database?.drop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

function apiFor(service: Service): Api {
  const request: Api['request'] = async (method, url, o = {}) => {
    const headers: Record<string, string> = { ...o.headers };
    if (o.key) headers.authorization = `Bearer ${o.key}`;
    let payload: string | undefined = o.rawBody;
    if (o.body !== undefined) {
      payload = JSON.stringify(o.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await service.app.inject({ method: method as never, url, headers, payload });
    let body: unknown = res.body;
    try {
      body = res.body === '' ? undefined : JSON.parse(res.body);
    } catch {
      // not JSON: keep the text
    }
    return { status: res.statusCode, body: body as never, headers: res.headers };
  };
  return apiOver(request);
}

/** The `Api` of a request function: in-process (`app.inject`) here, over real HTTP in http-api.ts. */
export function apiOver(request: Api['request']): Api {
  return {
    request,
    as: (key) => ({
      get: (url) => request('GET', url, { key }),
      post: (url, body) => request('POST', url, { key, body }),
      patch: (url, body) => request('PATCH', url, { key, body }),
      put: (url, body) => request('PUT', url, { key, body }),
      delete: (url) => request('DELETE', url, { key }),
    }),
  };
}
