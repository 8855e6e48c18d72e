import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { loggerOptions } from '../../src/server/app.ts';
import { loadConfig } from '../../src/server/config.ts';
import type { Orchestrator } from '../../src/orchestrator/orchestrator.ts';
import { createService, type Service } from '../../src/server/service.ts';
import { freePort } from './free-port.ts';
import { createTestDatabase } from './postgres.ts';

export interface HttpReply {
  status: number;
  body: any;
  text: string;
  headers: Record<string, string>;
}

/** A real HTTP call (sockets, headers and all): `body` goes as JSON, `rawBody` as given. */
export type HttpCall = (
  method: string,
  url: string,
  o?: {
    key?: string;
    authorization?: string;
    body?: unknown;
    rawBody?: string | Uint8Array;
    headers?: Record<string, string>;
  },
) => Promise<HttpReply>;

export interface LoggedService {
  service: Service;
  url: string;
  adminKey: string;
  dataDir: string;
  /** Every line the service logged, exactly as production's logger options render it. */
  logs: string[];
  /** A real HTTP call to the service (or to an absolute URL). */
  request: HttpCall;
  close(): Promise<void>;
}

/**
 * Starts the service on a real port with production's logger options (`loggerOptions` of app.ts: redaction,
 * path-only requests, database parameters dropped) at `level`, capturing every line. startTestService's
 * logger is plain pino at info, so it cannot show what production would log.
 */
export async function startLoggedService(opts: {
  level: string;
  env?: Record<string, string>;
  orchestrator?: Orchestrator;
}): Promise<LoggedService> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'assay-logged-'));
  const database = await createTestDatabase();
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const config = loadConfig({
    ASSAY_DATA_DIR: dataDir,
    DATABASE_URL: database.url,
    PORT: String(port),
    ASSAY_PUBLIC_URL: url,
    ASSAY_LOG_LEVEL: opts.level,
    ...opts.env,
  });
  const logs: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      logs.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  const service = await createService(config, {
    logger: { ...loggerOptions(opts.level), stream } as never,
    orchestrator: opts.orchestrator,
  });
  if (!service.bootstrapKey) throw new Error('a fresh database must yield a bootstrap admin key');
  await service.app.listen({ host: '127.0.0.1', port });
  return {
    service,
    url,
    adminKey: service.bootstrapKey,
    dataDir,
    logs,
    request: httpCall(url),
    async close() {
      await service.close();
      await database.drop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** HTTP calls to `baseUrl` (a path) or to an absolute URL (a presigned one), authorised by `key`. */
export function httpCall(baseUrl: string): HttpCall {
  return async (method, target, o = {}) => {
    const headers: Record<string, string> = { ...o.headers };
    if (o.key) headers.authorization = `Bearer ${o.key}`;
    if (o.authorization !== undefined) headers.authorization = o.authorization;
    let body = o.rawBody;
    if (o.body !== undefined) {
      body = JSON.stringify(o.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await fetch(target.startsWith('http') ? target : `${baseUrl}${target}`, {
      method,
      headers,
      body,
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      // not JSON: keep the text
    }
    return { status: res.status, body: parsed, text, headers: Object.fromEntries(res.headers) };
  };
}
