import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { base64url, exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWTPayload } from 'jose';
import {
  generateOrchestratorKey,
  mintEmbeddedOrchestratorKey,
} from '../../src/server/orchestration/orchestrator-keys.ts';
import { FakeOrchestrator } from '../support/fake-orchestrator.ts';
import { takeBootstrapKey } from '../support/assay-server.ts';
import { committedExperiment, createRun } from '../support/fixtures.ts';
import { startLoggedAssayServer, type LoggedAssayServer } from '../support/logged-assay-server.ts';
import {
  httpCall,
  startLoggedService,
  type HttpCall,
  type HttpReply,
  type LoggedService,
} from '../support/logged-service.ts';
import { createTestDatabase } from '../support/postgres.ts';
import { s3StorageEnv, startSeaweedFs, type SeaweedFs } from '../support/seaweedfs.ts';
import { SecretRegistry } from '../support/secret-scan.ts';
import { apiOver, type Api } from '../support/service.ts';
import { exchange, mintExchangeToken } from '../support/worker-key-exchange.ts';

// "Logs never contain a key or a presigned URL's signature": flows that handle every kind of secret, with the
// service logging at trace through production's logger options, then every captured line is scanned for the
// secrets the test saw (full keys, their secret parts, access tokens, URL signatures, configured credentials)
// and for anything shaped like one. A real `assay server` (embedded Temporal, a managed run, S3 on SeaweedFS)
// is scanned the same way, every line of it: the bootstrap key goes to a file, not to the output.

const ISSUER = 'https://idp.example.test/';
const AUDIENCE = 'assay-api';
const now = () => Math.floor(Date.now() / 1000);

/** Every answer passes through the registry, so whatever a flow is handed (keys, URLs) counts as a secret. */
function recording(request: HttpCall, secrets: SecretRegistry): HttpCall {
  return async (method, url, o = {}) => {
    const res = await request(method, url, o);
    secrets.collect(res.body, `${method} ${url.split('?')[0]}`);
    return res;
  };
}

/** A presigned request's headers, less Content-Length (fetch sets it from the body). */
const signedHeaders = (h: Record<string, string>) =>
  Object.fromEntries(Object.entries(h).filter(([k]) => k.toLowerCase() !== 'content-length'));

function expect(res: Pick<HttpReply, 'status' | 'body'> & { text?: string }, status: number, what: string) {
  const text = res.text ?? JSON.stringify(res.body);
  assert.equal(res.status, status, `${what}: ${text.slice(0, 500)}`);
  return res.body;
}

/** Bearer tokens that must fail, each built around real key material so a leak of it would be a leak. */
function badTokens(good: string): string[] {
  const id = good.slice(-75, -43);
  const forged = `${good.slice(0, -43)}${randomBytes(32).toString('base64url')}`;
  return [
    forged,
    `sk_agent_${id}${good.slice(-43)}`,
    good.slice(0, -1),
    `${good}x`,
    `sk_worker_${randomUUID().replaceAll('-', '')}${randomBytes(32).toString('base64url')}`,
  ];
}

describe('logs never contain a key or a presigned URL signature', () => {
  const secrets = new SecretRegistry();

  describe('the service in-process, production logger options at trace', () => {
    let svc: LoggedService;
    let call: HttpCall;
    // The shared fixtures over the same recorded calls.
    let api: Api;
    let jwksDir: string;
    let signer: CryptoKey;
    const fake = new FakeOrchestrator();
    const orchestratorKey = generateOrchestratorKey();
    const storageSecret = randomBytes(30).toString('base64url');

    const jwt = async (claims: JWTPayload, key: CryptoKey = signer) =>
      new SignJWT({
        iss: ISSUER,
        aud: AUDIENCE,
        sub: `researcher-${randomUUID()}`,
        iat: now(),
        exp: now() + 600,
        ...claims,
      })
        .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
        .sign(key);

    before(async () => {
      jwksDir = await mkdtemp(path.join(tmpdir(), 'assay-log-jwks-'));
      const pair = await generateKeyPair('RS256', { extractable: true });
      signer = pair.privateKey;
      await writeFile(
        path.join(jwksDir, 'jwks.json'),
        JSON.stringify({
          keys: [{ ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' }],
        }),
      );
      svc = await startLoggedService({
        level: 'trace',
        orchestrator: fake,
        env: {
          ASSAY_JWT_ISSUER: ISSUER,
          ASSAY_JWT_AUDIENCE: AUDIENCE,
          ASSAY_JWT_JWKS_FILE: path.join(jwksDir, 'jwks.json'),
          ASSAY_ORCHESTRATOR_KEY: orchestratorKey,
          ASSAY_STORAGE_SECRET: storageSecret,
          ASSAY_AUTH_CACHE_S: '0.001', // every use of a key reaches the database
          ASSAY_MULTIPART_THRESHOLD_BYTES: '8',
          ASSAY_MULTIPART_PART_BYTES: '4',
        },
      });
      call = recording(svc.request, secrets);
      api = apiOver(call);
      secrets.addToken(svc.adminKey, 'the bootstrap admin key');
      secrets.addToken(orchestratorKey, 'ASSAY_ORCHESTRATOR_KEY');
      secrets.add(storageSecret, 'ASSAY_STORAGE_SECRET');
    });
    after(async () => {
      await svc?.close();
      await rm(jwksDir, { recursive: true, force: true });
    });

    it('mints, uses, lists and revokes keys, and refuses bad ones', async () => {
      const admin = svc.adminKey;
      const user = expect(
        await call('POST', '/admin/users', { key: admin, body: { email: 'ada@example.test' } }),
        201,
        'create user',
      ).api_key.key as string;
      for (const kind of ['user', 'agent']) {
        const minted = expect(
          await call('POST', '/api-keys', {
            key: user,
            body: { description: kind, kind, scopes: ['experiments:read', 'experiments:write'] },
          }),
          201,
          `mint ${kind}`,
        );
        expect(await call('GET', '/v1/me', { key: minted.key }), 200, `use ${kind}`);
        expect(await call('DELETE', `/api-keys/${minted.id}`, { key: user }), 200, `revoke ${kind}`);
        expect(await call('GET', '/experiments', { key: minted.key }), 401, `revoked ${kind}`);
      }
      expect(await call('GET', '/api-keys', { key: user }), 200, 'list keys');
      for (const bad of badTokens(user)) {
        secrets.addToken(bad, 'a bad key');
        expect(await call('GET', '/v1/me', { key: bad }), 401, 'bad key');
      }
      // Keys where they do not belong: in a query string, and pasted as the id of the key to revoke (the path
      // is logged).
      expect(await call('GET', `/experiments?api_key=${user}`, { key: user }), 400, 'a key in the query');
      expect(await call('DELETE', `/api-keys/${user}`, { key: user }), 400, 'a key pasted as an id');
      expect(
        await call('GET', `/experiments/${user}/variations`, { key: user }),
        400,
        'a key pasted as an experiment id',
      );
      for (const authorization of [
        `bearer ${user}x`,
        `Basic ${Buffer.from(`ada:${user}`).toString('base64')}`,
        `Bearer  ${user} extra`,
        user,
      ]) {
        expect(await call('GET', '/v1/me', { authorization }), 401, 'malformed Authorization');
      }
    });

    it('takes good access tokens and refuses expired, foreign and unsigned ones', async () => {
      const good = await jwt({ email: 'grace@example.test', email_verified: true });
      secrets.addToken(good, 'an access token');
      expect(await call('GET', '/v1/me', { key: good }), 200, 'good token');
      expect(
        await call('POST', '/api-keys', {
          key: good,
          body: { description: 'from jwt', scopes: ['runs:read'] },
        }),
        201,
        'mint with a token',
      );
      const other = (await generateKeyPair('RS256')).privateKey;
      const part = (o: object) => base64url.encode(JSON.stringify(o));
      for (const bad of [
        await jwt({ exp: now() - 60 }),
        await jwt({}, other),
        await jwt({ aud: 'elsewhere' }),
        `${part({ alg: 'none' })}.${part({ iss: ISSUER, aud: AUDIENCE, sub: 'x', exp: now() + 60 })}.`,
        `${good.slice(0, -4)}AAAA`,
      ]) {
        secrets.addToken(bad, 'a bad access token');
        expect(await call('GET', '/v1/me', { key: bad }), 401, 'bad token');
      }
    });

    it('drives a run with a worker key and moves bytes through presigned local URLs, plain and multipart', async () => {
      const owner = svc.adminKey;
      const exp = await committedExperiment(
        api,
        owner,
        { name: 'secrets' },
        'lr: 1\nlaunch:\n  command: "true"\n',
      );
      const run = await createRun(api, owner, exp.id);
      const runPath = run.path;
      const worker = expect(
        await call('POST', '/api-keys', {
          key: owner,
          body: {
            description: 'worker',
            kind: 'worker',
            scopes: ['runs:read', 'runs:write', 'assets:read', 'assets:write'],
            run: { experiment_id: exp.id, n: 1, r: run.r },
          },
        }),
        201,
        'worker key',
      ).key as string;
      expect(await call('GET', `${runPath}/config`, { key: worker }), 200, 'config');
      expect(
        await call('POST', `${runPath}/start`, { key: worker, body: { environment: { os: 'linux' } } }),
        200,
        'start',
      );
      expect(await call('POST', `${runPath}/heartbeat`, { key: worker }), 200, 'heartbeat');
      const declared = [
        { name: 'metrics.json', size: 6, content_type: 'application/json' },
        { name: 'weights.bin', size: 10 },
      ];
      const asset = expect(
        await call('POST', '/assets', {
          key: worker,
          body: {
            kind: 'output',
            name: 'out',
            presign: true,
            run: { experiment_id: exp.id, n: 1, r: run.r },
            components: declared,
          },
        }),
        201,
        'presign',
      );
      const plain = asset.uploads['metrics.json'];
      expect(
        await call('PUT', plain.url, {
          rawBody: '{"a":1}'.slice(0, 6),
          headers: signedHeaders(plain.headers),
        }),
        200,
        'PUT',
      );
      const bytes = randomBytes(10);
      for (const p of asset.uploads['weights.bin'].parts)
        expect(
          await call('PUT', p.url, {
            rawBody: bytes.subarray((p.part_number - 1) * 4, (p.part_number - 1) * 4 + p.size),
            headers: signedHeaders(p.headers),
          }),
          200,
          'PUT part',
        );
      const tampered = plain.url.replace(
        /signature=[^&]+/,
        `signature=${randomBytes(32).toString('base64url')}`,
      );
      secrets.addUrl(tampered, 'a tampered upload URL');
      expect(
        await call('PUT', tampered, { rawBody: '{"a":1', headers: signedHeaders(plain.headers) }),
        403,
        'tampered PUT',
      );
      expect(await call('PUT', `/assets/${asset.id}/finalize`, { key: worker }), 200, 'finalize');
      const download = expect(
        await call('GET', `/assets/${asset.id}/download`, { key: owner }),
        200,
        'download',
      );
      for (const c of Object.values(download.components) as { url: string }[])
        expect(await call('GET', c.url), 200, 'GET object');
      expect(await call('POST', `${runPath}/succeed`, { key: worker }), 200, 'succeed');
    });

    it('uses the orchestrator keys and the worker keys they mint, revoked ones included', async () => {
      const owner = svc.adminKey;
      const exp = await committedExperiment(api, owner, { name: 'managed' }, 'launch:\n  command: "true"\n');
      const run = await createRun(api, owner, exp.id);
      const runPath = run.path;
      expect(await call('POST', `${runPath}/provision`, { key: owner }), 202, 'provision');
      const embedded = await mintEmbeddedOrchestratorKey(svc.service.db);
      secrets.addToken(embedded.token, 'an embedded orchestrator key');
      for (const key of [orchestratorKey, embedded.token])
        expect(await call('GET', `/orchestrator/runs/${run.id}`, { key }), 200, 'orchestrator read');
      const token = await mintExchangeToken(api, orchestratorKey, run.id);
      const late = await mintExchangeToken(api, embedded.token, run.id);
      const second = expect(await exchange(api, token), 201, 'exchange').key as string;
      expect(await exchange(api, token), 401, 'spent exchange token');
      expect(await exchange(api, late), 401, 'voided exchange token');
      expect(await call('GET', `${runPath}/config`, { key: token }), 401, 'exchange token as a key');
      expect(await call('GET', `${runPath}/config`, { key: second }), 200, 'worker key');
      expect(await call('POST', `${runPath}/start`, { key: second }), 200, 'start');
      expect(
        await call('DELETE', `/orchestrator/runs/${run.id}/worker-keys`, { key: orchestratorKey }),
        200,
        'revoke worker keys',
      );
      expect(await call('POST', `${runPath}/heartbeat`, { key: second }), 401, 'revoked worker key');
      await embedded.revoke();
      expect(
        await call('GET', `/orchestrator/runs/${run.id}`, { key: embedded.token }),
        401,
        'revoked orchestrator key',
      );
      expect(
        await call('GET', '/v1/me', { key: orchestratorKey }),
        403,
        'orchestrator key off its endpoints',
      );
    });

    it('logs failures (503 from an unreachable orchestrator, 500 from broken storage) without secrets', async () => {
      const owner = svc.adminKey;
      const exp = await committedExperiment(api, owner, { name: 'failing' }, 'launch:\n  command: "true"\n');
      const run = await createRun(api, owner, exp.id);
      fake.failing.add('startManagedRun');
      expect(await call('POST', `${run.path}/provision`, { key: owner }), 503, 'provision, Temporal down');
      fake.failing.clear();
      // Storage that cannot write: the objects directory replaced by a file.
      const objects = path.join(svc.dataDir, 'objects');
      await rm(objects, { recursive: true, force: true });
      await writeFile(objects, 'not a directory');
      expect(
        await call('POST', '/assets', {
          key: owner,
          body: { kind: 'report', name: 'r', experiment_id: exp.id, content: 'x' },
        }),
        500,
        'inline asset, storage broken',
      );
      assert.ok(
        svc.logs.some((l) => l.includes('"level":50') && l.includes('request failed')),
        'the 500 was logged',
      );
    });

    it('logged at trace, and no line holds a secret', () => {
      assert.equal(svc.service.app.log.level, 'trace');
      assert.ok(svc.logs.length > 100, `only ${svc.logs.length} log lines`);
      assert.ok(secrets.size > 40, `only ${secrets.size} secrets seen`);
      // The scan itself works: a line holding a key, or a signed URL, is found.
      assert.equal(
        secrets.scan(
          [`{"msg":"${svc.adminKey.slice(-43)}"}`, '{"path":"/storage/x?signature=abcdefghijklmnop"}'],
          'control',
        ).length,
        2,
      );
      assert.deepEqual(secrets.scan(svc.logs, 'service log'), []);
    });
  });

  describe('a real `assay server` process: Temporal, a managed run, S3', () => {
    let server: LoggedAssayServer;
    let store: SeaweedFs;
    let database: Awaited<ReturnType<typeof createTestDatabase>>;
    let dataDir: string;
    let serverEnv: Record<string, string>;
    let call: HttpCall;
    let api: Api;

    before(async () => {
      [store, database, dataDir] = await Promise.all([
        startSeaweedFs(),
        createTestDatabase(),
        mkdtemp(path.join(tmpdir(), 'assay-log-server-')),
      ]);
      secrets.add(store.secretAccessKey, 'S3_SECRET_ACCESS_KEY');
      serverEnv = {
        ASSAY_DATA_DIR: dataDir,
        DATABASE_URL: database.url,
        ASSAY_LOG_LEVEL: 'trace',
        ...s3StorageEnv(store),
        ASSAY_RUN_POLL_S: '1',
        // The managed run below is a researcher's, not an admin's: the in-process worker must start
        // it locally.
        ASSAY_LOCAL_COMPUTE_USERS: 'all',
      };
      server = await startLoggedAssayServer(serverEnv, dataDir);
      call = recording(httpCall(server.url), secrets);
      api = apiOver(call);
    });
    after(async () => {
      await server?.stop();
      await store?.stop();
      await database?.drop();
      await rm(dataDir, { recursive: true, force: true });
    });

    it(
      'runs a managed run and S3 uploads, then no line of its output holds a secret, the bootstrap key included',
      { timeout: 180_000 },
      async () => {
        const stdout = await server.stdout();
        assert.match(stdout, /bootstrap admin key written to /, 'the start says where the key is');
        const admin = await takeBootstrapKey(serverEnv);
        assert.ok(admin, 'assay admin bootstrap-key hands over the key');
        secrets.addToken(admin, 'the bootstrap admin key');
        const user = expect(
          await call('POST', '/admin/users', { key: admin, body: { email: 'lin@example.test' } }),
          201,
          'create user',
        ).api_key.key as string;
        const agent = expect(
          await call('POST', '/api-keys', {
            key: user,
            body: {
              description: 'agent',
              kind: 'agent',
              scopes: [
                'experiments:read',
                'experiments:write',
                'runs:read',
                'runs:write',
                'assets:read',
                'assets:write',
              ],
            },
          }),
          201,
          'agent key',
        );
        for (const bad of badTokens(user)) {
          secrets.addToken(bad, 'a bad key');
          expect(await call('GET', '/v1/me', { key: bad }), 401, 'bad key');
        }
        expect(
          await call('DELETE', `/api-keys/${agent.key}`, { key: user }),
          400,
          'a key pasted as the id to revoke',
        );
        const key = agent.key as string;
        const exp = await committedExperiment(
          api,
          key,
          { name: 'managed secrets' },
          'lr: 1\nlaunch:\n  command: mkdir -p outputs && echo 0.42 > outputs/loss.txt\n',
        );
        const run = await createRun(api, key, exp.id);
        const runPath = run.path;
        expect(await call('POST', `${runPath}/provision`, { key }), 202, 'provision');
        // Meanwhile, a presigned S3 upload and download by the agent, and a tampered URL.
        const asset = expect(
          await call('POST', '/assets', {
            key,
            body: {
              kind: 'output',
              name: 'notes',
              presign: true,
              experiment_id: exp.id,
              components: [{ name: 'a.txt', size: 5, content_type: 'text/plain' }],
            },
          }),
          201,
          'presign',
        );
        const upload = asset.uploads['a.txt'];
        expect(
          await call('PUT', upload.url, { rawBody: 'hello', headers: signedHeaders(upload.headers) }),
          200,
          'S3 PUT',
        );
        expect(await call('PUT', `/assets/${asset.id}/finalize`, { key }), 200, 'finalize');
        const download = expect(await call('GET', `/assets/${asset.id}/download`, { key }), 200, 'download')
          .components['a.txt'];
        expect(await call('GET', download.url), 200, 'S3 GET');
        const tampered = download.url.replace(
          /X-Amz-Signature=[0-9a-f]+/,
          `X-Amz-Signature=${randomBytes(32).toString('hex')}`,
        );
        secrets.addUrl(tampered, 'a tampered S3 URL');
        expect(await call('GET', tampered), 403, 'tampered S3 GET');
        let state = '';
        for (let i = 0; i < 240 && state !== 'succeeded' && state !== 'failed'; i++) {
          await new Promise((resolve) => setTimeout(resolve, 500));
          state = expect(await call('GET', runPath, { key }), 200, 'run').state;
        }
        assert.equal(state, 'succeeded', 'the managed run succeeded');
        const outputs = expect(
          await call('GET', `/assets?experiment_id=${exp.id}&n=1&r=${run.r}`, { key }),
          200,
          'outputs',
        );
        assert.ok(
          outputs.items.some(
            (a: { name: string; state: string }) => a.name === 'loss.txt' && a.state === 'ready',
          ),
          JSON.stringify(outputs),
        );

        await server.stop(); // flushes everything, shutdown lines included
        const out = (await server.stdout()).split('\n');
        const err = (await server.stderr()).split('\n');
        assert.ok(out.length + err.length > 50, 'the server logged');
        const runnerLogs = await readdir(path.join(dataDir, 'instances')).then((files) =>
          files.filter((f) => f.endsWith('.log')),
        );
        assert.ok(runnerLogs.length > 0, 'the local provider kept the runner output');
        assert.ok(
          secrets.scan([`bootstrap admin key: ${admin}`], 'control').length > 0,
          'the scan finds the bootstrap key in a line',
        );
        const findings = [
          ...secrets.scan(out, 'assay server stdout'),
          ...secrets.scan(err, 'assay server stderr'),
        ];
        for (const file of runnerLogs)
          findings.push(
            ...secrets.scan(
              (await readFile(path.join(dataDir, 'instances', file), 'utf8')).split('\n'),
              `runner log ${file}`,
            ),
          );
        assert.deepEqual(findings, []);
      },
    );
  });
});
