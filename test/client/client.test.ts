import assert from 'node:assert/strict';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import {
  APIConnectionError,
  APITimeoutError,
  AuthenticationError,
  BadRequestError,
  Client,
  ConfigError,
  ConflictError,
  NotFoundError,
  PERSONAL,
  PermissionDeniedError,
  ServerError,
} from '../../src/client/index.ts';
import { startRecordingProxy } from '../support/recording-proxy.ts';
import { startTestService, type TestService } from '../support/service.ts';

type User = { email: string; key: string };

describe('client against the real service', () => {
  let t: TestService;
  let off: TestService;
  let home: string;
  let users: Record<'explicit' | 'env' | 'credentials' | 'config', User>;
  const savedEnv = { ...process.env };

  before(async () => {
    t = await startTestService({ listen: true });
    off = await startTestService({ listen: true, env: { ASSAY_SEARCH: 'off' } });
    users = {
      explicit: await t.createUser(),
      env: await t.createUser(),
      credentials: await t.createUser(),
      config: await t.createUser(),
    };
    home = await mkdtemp(path.join(tmpdir(), 'assay-client-home-'));
  });
  after(async () => {
    await t.close();
    await off.close();
    await rm(home, { recursive: true, force: true });
  });
  afterEach(() => {
    for (const k of Object.keys(process.env))
      if (k.startsWith('SERVICE_') || k === 'HOME') delete process.env[k];
    Object.assign(process.env, savedEnv);
  });

  async function files(
    config: Record<string, unknown> | undefined,
    credentials: Record<string, unknown> | undefined,
  ) {
    const dir = path.join(home, '.assay');
    await rm(dir, { recursive: true, force: true });
    await mkdir(dir, { recursive: true });
    const yaml = (o: Record<string, unknown>) =>
      Object.entries(o)
        .map(([k, v]) => `${k}: ${JSON.stringify(v)}`)
        .join('\n') + '\n';
    if (config) await writeFile(path.join(dir, 'config.yaml'), yaml(config));
    if (credentials) await writeFile(path.join(dir, 'credentials.yaml'), yaml(credentials), { mode: 0o600 });
    process.env.HOME = home;
  }
  const whoami = async (client: Client) => (await client.me.get()).email;

  it('takes each setting from the first source that has it: options, environment, credentials.yaml, config.yaml', async () => {
    await files({ server_url: t.url, api_key: users.config.key }, { api_key: users.credentials.key });
    assert.equal(
      await whoami(Client.fromEnv()),
      users.credentials.email,
      'credentials.yaml beats config.yaml',
    );
    process.env.SERVICE_API_KEY = users.env.key;
    assert.equal(await whoami(Client.fromEnv()), users.env.email, 'the environment beats the files');
    assert.equal(
      await whoami(new Client({ apiKey: users.explicit.key })),
      users.explicit.email,
      'options beat the environment',
    );
    await files({ server_url: t.url, api_key: users.config.key }, undefined);
    delete process.env.SERVICE_API_KEY;
    assert.equal(await whoami(Client.fromEnv()), users.config.email, 'config.yaml alone is enough');
  });

  it('reads the server URL the same way, and defaults it', async () => {
    await files({ server_url: 'http://127.0.0.1:9' }, { api_key: users.config.key });
    process.env.SERVICE_SERVER_URL = t.url!;
    assert.equal(await whoami(Client.fromEnv()), users.config.email);
    delete process.env.SERVICE_SERVER_URL;
    await assert.rejects(Client.fromEnv().me.get(), APIConnectionError);
    await files(undefined, { api_key: users.config.key });
    assert.equal(Client.fromEnv().settings.serverUrl, 'http://127.0.0.1:8080');
  });

  it('uses the single file named by SERVICE_CONFIG instead of the default files', async () => {
    await files({ server_url: t.url, api_key: users.config.key }, { api_key: users.credentials.key });
    const single = path.join(home, 'single.yaml');
    await writeFile(single, `server_url: ${t.url}\napi_key: ${users.env.key}\n`);
    process.env.SERVICE_CONFIG = single;
    assert.equal(await whoami(Client.fromEnv()), users.env.email);
  });

  it('fromFile reads only the given files and ignores the environment', async () => {
    const config = path.join(home, 'c.yaml');
    const credentials = path.join(home, 'k.yaml');
    await writeFile(config, `server_url: ${t.url}\n`);
    await writeFile(credentials, `api_key: ${users.credentials.key}\n`);
    process.env.SERVICE_API_KEY = users.env.key;
    process.env.SERVICE_SERVER_URL = 'http://127.0.0.1:9';
    assert.equal(await whoami(Client.fromFile(config, credentials)), users.credentials.email);
    await writeFile(config, `server_url: ${t.url}\napi_key: ${users.config.key}\n`);
    assert.equal(await whoami(Client.fromFile(config)), users.config.email, 'a combined file as config');
  });

  it('raises ConfigError before any request when no source gives a key', async () => {
    const proxy = await startRecordingProxy(t.url!);
    try {
      await files({ server_url: proxy.url }, undefined);
      assert.throws(() => Client.fromEnv(), ConfigError);
      assert.throws(() => new Client({ serverUrl: proxy.url }), ConfigError);
      assert.deepEqual(proxy.requests, []);
    } finally {
      await proxy.close();
    }
  });

  it('resolves the organization slug through /v1/me/scopes once, and PERSONAL forces the personal scope', async () => {
    const owner = new Client({ serverUrl: t.url, apiKey: users.explicit.key });
    const org = await owner.transport.post<{ id: string }>('/organizations', {
      slug: 'vision-lab',
      name: 'Vision lab',
    });
    const proxy = await startRecordingProxy(t.url!);
    try {
      const client = new Client({
        serverUrl: proxy.url,
        apiKey: users.explicit.key,
        organizationSlug: 'vision-lab',
      });
      const inOrg = await client.experiments.create({ name: 'in the org' });
      assert.equal(inOrg.organization_id, org.id);
      const second = await client.experiments.create({ name: 'again' });
      assert.equal(second.organization_id, org.id);
      assert.equal(
        proxy.requests.filter((r) => r.startsWith('GET /v1/me/scopes')).length,
        1,
        'resolved once',
      );
      const personal = await client.experiments.create({ name: 'mine', organizationId: PERSONAL });
      assert.equal(personal.organization_id, null);
      const listed = await client.experiments.list();
      assert.deepEqual(listed.items.map((e) => e.name).sort(), ['again', 'in the org']);
      const unknown = new Client({
        serverUrl: t.url,
        apiKey: users.explicit.key,
        organizationSlug: 'no-such-lab',
      });
      await assert.rejects(unknown.experiments.list(), ConfigError);
      assert.throws(
        () =>
          new Client({
            serverUrl: t.url,
            apiKey: users.explicit.key,
            organizationSlug: 'vision-lab',
            organizationId: org.id,
          }),
        ConfigError,
      );
    } finally {
      await proxy.close();
    }
  });

  it('raises the typed error of each status, with code, message and request id', async () => {
    const client = new Client({ serverUrl: t.url, apiKey: users.explicit.key });
    const badCursor = await client.experiments.list({ cursor: 'nope' }).catch((e: unknown) => e);
    assert.ok(badCursor instanceof BadRequestError);
    assert.equal(badCursor.statusCode, 400);
    assert.equal(badCursor.code, 'invalid_cursor');
    assert.ok(badCursor.requestId);
    const invalid = await client.experiments.create({ name: '' }).catch((e: unknown) => e);
    assert.ok(invalid instanceof BadRequestError);
    assert.equal(invalid.statusCode, 422);
    await assert.rejects(client.experiments.get('00000000-0000-4000-8000-000000000000'), NotFoundError);
    const draft = await client.experiments.create({ name: 'empty' });
    await assert.rejects(
      client.experiments.commit(draft.id),
      (e: unknown) => e instanceof ConflictError && e.code === 'no_variations',
    );
    const narrow = await client.apiKeys.create({ description: 'read only', scopes: ['experiments:read'] });
    const reader = new Client({ serverUrl: t.url, apiKey: narrow.key });
    await assert.rejects(
      reader.experiments.create({ name: 'x' }),
      (e: unknown) => e instanceof PermissionDeniedError && e.code === 'insufficient_scope',
    );
    await client.apiKeys.revoke(narrow.id);
    await assert.rejects(reader.experiments.list(), AuthenticationError);
    await assert.rejects(
      new Client({ serverUrl: t.url, apiKey: 'sk_user_bogus' }).me.get(),
      AuthenticationError,
    );
  });

  it('raises ServerError with status 503 when search is not configured', async () => {
    const client = new Client({ serverUrl: off.url, apiKey: off.adminKey });
    const error = await client.search.query('anything').catch((e: unknown) => e);
    assert.ok(error instanceof ServerError);
    assert.equal(error.statusCode, 503);
  });

  it('never retries: one failing call is one request', async () => {
    const proxy = await startRecordingProxy(off.url!);
    try {
      await assert.rejects(
        new Client({ serverUrl: proxy.url, apiKey: off.adminKey }).search.query('x'),
        ServerError,
      );
      assert.equal(proxy.requests.length, 1);
    } finally {
      await proxy.close();
    }
  });

  it('times out per request and reports unreachable servers as connection errors', async () => {
    const silent = http.createServer(() => {});
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
      await assert.rejects(
        new Client({ serverUrl: url, apiKey: users.explicit.key, timeout: 0.3 }).me.get(),
        APITimeoutError,
      );
    } finally {
      silent.closeAllConnections();
      silent.close();
    }
    const refused = await new Client({ serverUrl: 'http://127.0.0.1:9', apiKey: users.explicit.key }).me
      .get()
      .catch((e: unknown) => e);
    assert.ok(refused instanceof APIConnectionError && !(refused instanceof APITimeoutError));
  });

  it('ignores keys it does not know and keeps ids and timestamps as strings', async () => {
    const proxy = await startRecordingProxy(t.url!, {
      addField: ['added_by_a_newer_server', { nested: [1, 2] }],
    });
    try {
      const client = new Client({ serverUrl: proxy.url, apiKey: users.explicit.key });
      const e = await client.experiments.create({ name: 'future proof' });
      assert.equal(typeof e.id, 'string');
      assert.equal(typeof e.created_at, 'string');
      const handle = client.experiment(e.id);
      assert.equal((await handle.data()).name, 'future proof');
      assert.ok((await client.experiments.list()).items.length > 0);
    } finally {
      await proxy.close();
    }
  });

  it('keeps per-handle data until a mutation through the handle, and nothing else', async () => {
    const proxy = await startRecordingProxy(t.url!);
    try {
      const client = new Client({ serverUrl: proxy.url, apiKey: users.explicit.key });
      const experiment = await client.createExperiment({ name: 'cached' });
      const gets = () => proxy.requests.filter((r) => r === `GET /experiments/${experiment.id}`).length;
      await experiment.data();
      await experiment.data();
      assert.equal(gets(), 1, 'second data() served from the handle');
      const variation = await experiment.createVariation('lr: 0.1\n');
      assert.equal((await experiment.data()).variations.length, 1, 'mutation dropped the cache');
      assert.equal(gets(), 2);
      await experiment.commit();
      assert.equal((await experiment.data()).state, 'committed');
      await client.experiments.get(experiment.id);
      await client.experiments.get(experiment.id);
      assert.equal(gets(), 5, 'namespaces never cache');
      const run = await variation.createRun();
      assert.equal((await run.data()).state, 'pending');
      await run.config();
      await run.start({ os: 'test' });
      assert.equal((await run.data()).state, 'running');
      const beat = await run.heartbeat();
      assert.deepEqual(
        [beat.state, beat.cancel_requested, typeof beat.last_heartbeat_at],
        ['running', false, 'string'],
      );
      assert.equal((await run.succeed()).state, 'succeeded');
    } finally {
      await proxy.close();
    }
  });

  it('keeps the run lifecycle on the Run handle only', () => {
    const client = new Client({ serverUrl: t.url, apiKey: users.explicit.key });
    for (const move of ['start', 'heartbeat', 'succeed', 'fail']) {
      assert.equal(move in client, false);
      assert.equal(move in client.runs, false);
      assert.equal(typeof (client.run('e', 1, 1) as unknown as Record<string, unknown>)[move], 'function');
    }
  });
});
