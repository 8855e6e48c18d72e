// `assay server --workers 2` on PostgreSQL: a primary process and two HTTP workers sharing the port. Each
// request below opens a connection of its own, and the primary hands connections to the workers in turn, so
// a handful of requests reach both. What one worker learns must hold on the other: a revoked key, the
// failed authentications of an address; /metrics sums them all; SIGTERM stops them all; a worker that dies
// is replaced.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startAssayServer, type AssayServer } from '../support/assay-server.ts';
import { eventually } from '../support/bounded-waits.ts';
import { createTestDatabase } from '../support/postgres.ts';

/** Every worker answers 401 for a revoked key within this (docs/architecture.md, Auth cache). */
const REVOCATION_BOUND_MS = 5_000;
const FAILURE_LIMIT = 10;

interface Answer {
  status: number;
  text: string;
}

/**
 * One request on a connection of its own (no keep-alive), so that consecutive calls reach both workers; from
 * `from`, a loopback address, where a test must not share its failed authentications with another's.
 */
function call(
  base: string,
  method: string,
  url: string,
  key?: string,
  body?: unknown,
  from = '127.0.0.1',
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${base}${url}`,
      {
        method,
        agent: false,
        localAddress: from,
        headers: {
          ...(key ? { authorization: `Bearer ${key}` } : {}),
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, text }));
      },
    );
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

/** The samples of one metric in a /metrics answer, by their label text (`{worker="1"}`, or `` for none). */
function samples(text: string, name: string): Map<string, number> {
  const found = new Map<string, number>();
  for (const line of text.split('\n')) {
    const m = new RegExp(`^${name}(\\{[^}]*\\})? (\\S+)$`).exec(line);
    if (m) found.set(m[1] ?? '', Number(m[2]));
  }
  return found;
}

/** The HTTP workers' pids: the primary's children. */
async function childrenOf(pid: number): Promise<number[]> {
  const text = await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8');
  return text.trim().split(/\s+/).filter(Boolean).map(Number);
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('assay server --workers 2', () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let dataDir: string;
  let server: AssayServer;
  let admin: string;
  let url: string;
  const metrics = async () => {
    const answer = await call(url, 'GET', '/metrics');
    assert.equal(answer.status, 200, answer.text);
    return answer.text;
  };

  before(async () => {
    database = await createTestDatabase();
    dataDir = await mkdtemp(path.join(tmpdir(), 'assay-workers-'));
    server = await startAssayServer(
      {
        DATABASE_URL: database.url,
        ASSAY_DATA_DIR: dataDir,
        ASSAY_ORCHESTRATOR: 'off',
        // Info: the one "Assay listening" line is read below.
        ASSAY_LOG_LEVEL: 'info',
        ASSAY_AUTH_FAILURE_LIMIT: String(FAILURE_LIMIT),
        // No periodic re-check: what ends a cached key here is the revocation notice.
        ASSAY_AUTH_RECHECK_S: '3600',
      },
      ['--workers', '2'],
    );
    // Ready means a worker answers; the primary's one line comes once every worker listens and its own
    // background work started.
    await eventually(
      async () => server.process.output().includes('Assay listening on'),
      30_000,
      'the primary says it is listening',
    );
    admin = server.bootstrapKey!;
    assert.ok(admin, 'the primary bootstraps the admin once');
    url = server.url;
  });
  after(async () => {
    await server?.stop();
    await database?.drop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('serves from both workers, prints one listening line, and /metrics sums every worker', async () => {
    assert.equal(server.process.output().match(/Assay listening on/g)?.length, 1, server.process.output());
    assert.equal((await childrenOf(server.process.pid)).length, 2, 'two HTTP workers');
    for (let i = 0; i < 20; i++) assert.equal((await call(url, 'GET', '/healthz')).status, 200);
    // Two scrapes, so that each worker answers one: both give the whole count.
    for (let scrape = 0; scrape < 2; scrape++) {
      const text = await metrics();
      const perWorker = [...samples(text, 'assay_http_worker_requests_total').values()];
      assert.ok(perWorker.filter((n) => n > 0).length >= 2, `requests served by both workers: ${perWorker}`);
      const healthz = samples(text, 'assay_http_request_duration_seconds_count');
      assert.equal(healthz.get('{method="GET",route="/healthz",status="200"}'), 20, 'summed over workers');
      assert.equal(samples(text, 'assay_auth_listener_up').get(''), 1);
    }
  });

  it('a key revoked through one worker answers 401 on every worker within 5 s', async () => {
    const minted = await call(url, 'POST', '/api-keys', admin, {
      description: 'revoked across workers',
      scopes: ['experiments:read'],
    });
    assert.equal(minted.status, 201, minted.text);
    const key = JSON.parse(minted.text) as { id: string; key: string };
    const lookups = async () => samples(await metrics(), 'assay_auth_key_lookups_total').get('') ?? 0;
    // Used until a round reaching both workers reads no key: each of them answers it from its cache.
    await eventually(
      async () => {
        const before = await lookups();
        for (let i = 0; i < 6; i++) assert.equal((await call(url, 'GET', '/v1/me', key.key)).status, 200);
        return (await lookups()) === before;
      },
      10_000,
      'both workers answer the key from their caches',
    );
    const revoked = await call(url, 'DELETE', `/api-keys/${key.id}`, admin);
    assert.equal(revoked.status, 200, revoked.text);
    // Six consecutive refusals on fresh connections: every worker refuses it.
    await eventually(
      async () => {
        for (let i = 0; i < 6; i++)
          if ((await call(url, 'GET', '/v1/me', key.key)).status !== 401) return false;
        return true;
      },
      REVOCATION_BOUND_MS,
      'every worker refuses the revoked key',
    );
  });

  it('counts an address’s failed authentications across workers', async () => {
    // Made up here: a key id of the right shape with no secret, refused like any wrong key.
    const bad = `sk_user_${randomBytes(16).toString('hex')}`;
    const from = '127.0.0.2';
    const me = (key: string) => call(url, 'GET', '/v1/me', key, undefined, from);
    // A key both workers verified passes even from a limited address (authenticator.ts).
    for (let i = 0; i < 4; i++) assert.equal((await me(admin)).status, 200);
    // Spread over both workers: neither saw the limit alone.
    for (let i = 0; i < FAILURE_LIMIT; i++) assert.equal((await me(bad)).status, 401);
    for (let i = 0; i < 2; i++) assert.equal((await me(bad)).status, 429);
    assert.equal((await me(admin)).status, 200, 'a valid key still passes');
  });

  it('replaces a worker that dies', async () => {
    const [victim] = await childrenOf(server.process.pid);
    process.kill(victim!, 'SIGKILL');
    await eventually(
      async () => {
        const pids = await childrenOf(server.process.pid);
        return pids.length === 2 && !pids.includes(victim!);
      },
      20_000,
      'a new worker',
    );
    await eventually(
      async () => /HTTP worker \d+ killed by SIGKILL; starting another/.test(server.process.output()),
      5_000,
      'the death is logged',
    );
    for (let i = 0; i < 4; i++) assert.equal((await call(url, 'GET', '/healthz')).status, 200);
  });

  it('stops every worker on SIGTERM to the primary, and exits 0', async () => {
    const workers = await childrenOf(server.process.pid);
    process.kill(server.process.pid, 'SIGTERM');
    assert.equal(await server.process.exited, 'exited with code 0', server.process.output());
    assert.deepEqual(workers.filter(alive), [], 'no worker outlives the primary');
  });
});
