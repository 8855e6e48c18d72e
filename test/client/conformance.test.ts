// The language-neutral conformance cases of test/conformance/*.json, run against this client; the Python SDK
// runs the same files (sdk/python/tests/test_conformance.py). Configuration cases call the resolver with a
// temporary home; error, retry and request cases meet a local server that answers the case's canned
// responses and records each request (the case data is the contract); service.json runs against a real
// service.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFileSync, rm, writeFile } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import * as clientModule from '../../src/client/index.ts';
import { ApiClient, PERSONAL, type ApiClientOptions } from '../../src/client/index.ts';
import { describeSource, resolveSettings, resolveSettingsFromFile } from '../../src/client/config.ts';
import { startTestService, type TestService } from '../support/service.ts';

const CONFORMANCE_DIR = path.resolve(import.meta.dirname, '../conformance');
const KEY = 'sk_user_conformance';

/** Case data: JSON of several shapes. */
type Json = any;

function load(name: string): Json[] {
  return JSON.parse(readFileSync(path.join(CONFORMANCE_DIR, name), 'utf8')).cases;
}

const camel = (name: string) => name.replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase());

/** `{home}` and `{name:X}` (a setting as this client names it: camelCase). */
function render(text: string, home = '/'): string {
  return text.replaceAll('{home}', home).replace(/\{name:([a-z_]+)\}/g, (_m, name: string) => camel(name));
}

function assertError(error: unknown, expect: Json, home?: string): void {
  assert.ok(error instanceof Error, `not an error: ${String(error)}`);
  assert.equal(error.name, expect.class, `${error.name}: ${error.message}`);
  for (const base of expect.is_a ?? []) {
    const Class = (clientModule as Record<string, unknown>)[base] as new (...args: never[]) => Error;
    assert.ok(error instanceof Class, `not a ${base}`);
  }
  if (expect.message !== undefined) assert.equal(error.message, render(expect.message, home));
  for (const part of expect.message_contains ?? [])
    assert.ok(error.message.includes(render(part, home)), error.message);
  const fields: Record<string, string> = {
    status_code: 'statusCode',
    code: 'code',
    details: 'details',
    request_id: 'requestId',
  };
  for (const [key, property] of Object.entries(fields)) {
    if (key in expect) assert.deepEqual((error as any)[property] ?? null, expect[key], key);
  }
}

async function expectError(promise: Promise<unknown> | (() => unknown)): Promise<unknown> {
  try {
    await (typeof promise === 'function' ? promise() : promise);
  } catch (error) {
    return error;
  }
  assert.fail('expected an error');
}

describe('conformance: configuration resolution (test/conformance/config.json)', () => {
  for (const c of load('config.json')) {
    it(c.name, async () => {
      const home = await promisify(mkdtemp)(path.join(tmpdir(), 'assay-conformance-'));
      try {
        for (const [rel, text] of Object.entries<string>(c.files ?? {})) {
          const file = path.join(home, rel);
          await promisify(mkdir)(path.dirname(file), { recursive: true });
          await promisify(writeFile)(file, text);
        }
        const env = Object.fromEntries(
          Object.entries<string>(c.env ?? {}).map(([k, v]) => [k, render(v, home)]),
        );
        const explicit = Object.fromEntries(Object.entries(c.explicit ?? {}).map(([k, v]) => [camel(k), v]));
        const resolve = () => {
          if (c.from_file) {
            const config = c.from_file.config === undefined ? undefined : render(c.from_file.config, home);
            const credentials =
              c.from_file.credentials === undefined ? undefined : render(c.from_file.credentials, home);
            return resolveSettingsFromFile(config, credentials, explicit);
          }
          return resolveSettings(explicit, { env, homeDir: home });
        };
        if (c.expect.error) {
          assertError(await expectError(resolve), c.expect.error, home);
          return;
        }
        const resolved = resolve();
        const s = resolved.settings;
        assert.deepEqual(
          {
            server_url: s.serverUrl,
            api_key: s.apiKey,
            timeout: s.timeout,
            max_upload_workers: s.maxUploadWorkers,
            organization_id: s.organizationId ?? null,
            organization_slug: s.organizationSlug ?? null,
          },
          c.expect.settings,
        );
        if (c.expect.sources) {
          const sources = Object.fromEntries(
            Object.entries(resolved.sources).map(([name, source]) => [
              name.replace(/[A-Z]/g, (l) => `_${l.toLowerCase()}`),
              describeSource(source!),
            ]),
          );
          const want = Object.fromEntries(
            Object.entries<string>(c.expect.sources).map(([k, v]) => [k, render(v, home)]),
          );
          assert.deepEqual(sources, want);
        }
        if (c.expect.warnings) {
          assert.deepEqual(
            [...resolved.warnings],
            c.expect.warnings.map((w: string) => render(w, home)),
          );
        }
      } finally {
        await promisify(rm)(home, { recursive: true, force: true });
      }
    });
  }
});

interface Recorded {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: http.IncomingHttpHeaders;
  body: unknown;
}

/** A local server answering `responses` in turn (200 {} when they run out) and recording each request. */
async function cannedServer(
  responses: Json[],
): Promise<{ url: string; requests: Recorded[]; close(): Promise<void> }> {
  const requests: Recorded[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://local');
      const raw = Buffer.concat(chunks).toString('utf8');
      requests.push({
        method: req.method ?? '',
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        headers: req.headers,
        body: raw === '' ? null : JSON.parse(raw),
      });
      const reply = responses[requests.length - 1] ?? { status: 200, body: {} };
      if (reply.drop) {
        req.socket.destroy();
        return;
      }
      const body = reply.body ?? '';
      const data = typeof body === 'string' ? body : JSON.stringify(body);
      const headers: Record<string, string> = { ...reply.headers };
      if (typeof body !== 'string') headers['content-type'] = 'application/json';
      res.writeHead(reply.status, headers);
      res.end(data);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const personal = (value: unknown) => (value === '{PERSONAL}' ? PERSONAL : (value as string | undefined));

/** A case's neutral call on this client. */
function call(client: ApiClient, method: string, a: Json): Promise<unknown> {
  const organizationId = personal(a.organization_id);
  const calls: Record<string, () => Promise<unknown>> = {
    'experiments.create': () =>
      client.experiments.create({ name: a.name, description: a.description, tags: a.tags, organizationId }),
    'experiments.list': () =>
      client.experiments.list({ state: a.state, tags: a.tags, limit: a.limit, organizationId }),
    'experiments.get': () => client.experiments.get(a.id),
    'experiments.delete': () => client.experiments.delete(a.id),
    'experiments.commit': () => client.experiments.commit(a.id),
    'variations.create': () => client.variations.create(a.experiment_id, { configYaml: a.config_yaml }),
    'runs.create': () => client.runs.create(a.experiment_id, a.n),
    'runs.provision': () => client.runs.provision(a.experiment_id, a.n, a.r),
    'runs.log_metrics': () => client.runs.logMetrics(a.experiment_id, a.n, a.r, a.points),
    search: () => client.search.query(a.q, { organizationId }),
    'assets.list': () => client.assets.list({ experimentId: a.experiment_id, kind: a.kind }),
    'api_keys.revoke': () => client.apiKeys.revoke(a.id),
  };
  const make = calls[method];
  assert.ok(make, `no call ${method} in this runner`);
  return make();
}

function cannedClient(url: string, settings: Json = {}): ApiClient {
  const options: ApiClientOptions = { serverUrl: url, apiKey: KEY, timeout: 10 };
  for (const [k, v] of Object.entries(settings)) (options as Json)[camel(k)] = v;
  return new ApiClient(options);
}

describe('conformance: errors by status (test/conformance/errors.json)', () => {
  for (const c of load('errors.json')) {
    it(c.name, async () => {
      const server = await cannedServer([c]);
      try {
        const error = await expectError(cannedClient(server.url).experiments.get('e1'));
        assertError(error, c.expect);
        assert.deepEqual(
          server.requests.map((r) => [r.method, r.path]),
          [['GET', '/experiments/e1']],
        );
      } finally {
        await server.close();
      }
    });
  }
});

describe('conformance: retries (test/conformance/retries.json)', () => {
  for (const c of load('retries.json')) {
    it(c.name, async () => {
      const server = await cannedServer(c.responses);
      try {
        const client = cannedClient(server.url);
        if (c.expect.error) {
          const error = await expectError(call(client, c.call.method, c.call.args));
          assert.equal((error as Error).name, c.expect.error, String(error));
        } else {
          assert.deepEqual((await call(client, c.call.method, c.call.args)) ?? null, c.expect.result);
        }
        assert.equal(server.requests.length, c.expect.attempts);
      } finally {
        await server.close();
      }
    });
  }
});

describe('conformance: the requests calls make (test/conformance/requests.json)', () => {
  for (const c of load('requests.json')) {
    it(c.name, async () => {
      const server = await cannedServer(c.responses ?? []);
      try {
        const client = cannedClient(server.url, c.client);
        for (const step of c.calls) {
          if (step.error) assertError(await expectError(call(client, step.method, step.args)), step.error);
          else await call(client, step.method, step.args);
        }
        const want = c.expect.requests;
        assert.deepEqual(
          server.requests.map((r) => [r.method, r.path]),
          want.map((w: Json) => [w.method, w.path]),
        );
        server.requests.forEach((got, i) => {
          const exp = want[i];
          assert.deepEqual(got.query, exp.query, `query of request ${i}`);
          assert.deepEqual(got.body, exp.body, `body of request ${i}`);
          for (const [name, value] of Object.entries(exp.headers))
            assert.equal(got.headers[name], value, name);
          for (const name of exp.absent_headers ?? []) assert.equal(got.headers[name], undefined, name);
        });
      } finally {
        await server.close();
      }
    });
  }
});

describe('conformance: metric delivery (test/conformance/metric-delivery.json)', () => {
  for (const c of load('metric-delivery.json')) {
    it(c.name, async () => {
      const server = await cannedServer(c.responses);
      try {
        const client = new ApiClient({
          serverUrl: server.url,
          apiKey: KEY,
          timeout: 10,
          metrics: { retryFor: c.retry_for, flushInterval: 0.05 },
        });
        // The case's expectation, unless it says this client differs on purpose.
        const expect = c.expect_by_client?.typescript ?? c.expect;
        const run = client.run('e1', 1, 1);
        run.logMetrics({ loss: 0.5 }, { step: 0 });
        if (expect.stored) {
          await run.flushMetrics();
        } else {
          const error = await expectError(run.flushMetrics());
          assert.equal((error as Error).name, expect.error);
          assert.equal((error as { dropped: number }).dropped, expect.dropped);
          assert.equal(((error as Error).cause as Error).name, expect.cause);
        }
        assert.equal(server.requests.length, expect.attempts);
        for (const request of server.requests) {
          assert.equal(
            `${request.method} ${request.path}`,
            'POST /experiments/e1/variations/1/runs/1/metrics',
          );
        }
      } finally {
        await server.close();
      }
    });
  }
});

function fill(value: Json, saved: Record<string, Json>): Json {
  if (typeof value === 'string')
    return value.replace(/\{(\w+)\.(\w+)\}/g, (_m, name: string, field: string) =>
      String(saved[name][field]),
    );
  if (Array.isArray(value)) return value.map((v) => fill(v, saved));
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fill(v, saved)]));
  return value;
}

describe('conformance: against a real service (test/conformance/service.json)', () => {
  let t: TestService;
  before(async () => {
    t = await startTestService({ pglite: true, listen: true, env: { ASSAY_ORCHESTRATOR: 'off' } });
  });
  after(async () => {
    await t?.close();
  });

  for (const c of load('service.json')) {
    it(c.name, async () => {
      const apiKey = c.client?.api_key ?? (await t.createUser()).key;
      const client = new ApiClient({ serverUrl: t.url!, apiKey });
      const saved: Record<string, Json> = {};
      for (const step of c.steps) {
        const args = fill(step.args, saved);
        if (step.expect?.error) {
          assertError(await expectError(call(client, step.method, args)), step.expect.error);
          continue;
        }
        const result = (await call(client, step.method, args)) as Json;
        for (const [k, v] of Object.entries(step.expect?.result ?? {})) assert.deepEqual(result[k], v, k);
        if (step.save_as) saved[step.save_as] = result;
      }
    });
  }
});
