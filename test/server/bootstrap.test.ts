import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../src/server/config.ts';
import { createService, type Service } from '../../src/server/service.ts';
import { createTestDatabase } from '../support/postgres.ts';

const silent = { level: 'silent' } as never;

async function whoAmI(service: Service, key: string) {
  const res = await service.app.inject({ url: '/v1/me', headers: { authorization: `Bearer ${key}` } });
  return { status: res.statusCode, body: res.json() as { email: string; is_admin: boolean } };
}

for (const driver of ['postgres', 'pglite'] as const) {
  describe(`bootstrapping the first admin on ${driver}`, () => {
    let dataDir: string;
    let database: Awaited<ReturnType<typeof createTestDatabase>> | undefined;
    let env: Record<string, string>;
    before(async () => {
      dataDir = await mkdtemp(path.join(tmpdir(), 'assay-bootstrap-'));
      database = driver === 'postgres' ? await createTestDatabase() : undefined;
      env = { ASSAY_DATA_DIR: dataDir, ...(database ? { DATABASE_URL: database.url } : {}) };
    });
    after(async () => {
      await database?.drop();
      await rm(dataDir, { recursive: true, force: true });
    });

    it('a start that fails before the admin is handed over leaves the next start to bootstrap one', async () => {
      const keyFile = path.join(dataDir, 'bootstrap-admin-key');
      // The key cannot be written: a directory stands where the file goes.
      await mkdir(keyFile, { recursive: true });
      await assert.rejects(createService(loadConfig(env), { logger: silent }), { code: 'EISDIR' });
      await rm(keyFile, { recursive: true });

      const service = await createService(loadConfig(env), { logger: silent });
      try {
        const key = service.bootstrapKey;
        assert.ok(key, 'the second start bootstraps the admin');
        assert.equal((await readFile(keyFile, 'utf8')).trim(), key);
        assert.equal((await stat(keyFile)).mode & 0o777, 0o600);
        const me = await whoAmI(service, key);
        assert.equal(me.status, 200);
        assert.deepEqual([me.body.email, me.body.is_admin], ['admin@localhost', true]);
      } finally {
        await service.close();
      }
      const again = await createService(loadConfig(env), { logger: silent });
      await again.close();
      assert.equal(again.bootstrapKey, undefined, 'only once');
    });
  });
}

describe('replicas starting together on an empty PostgreSQL database', () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let dataDir: string;
  before(async () => {
    database = await createTestDatabase();
    dataDir = await mkdtemp(path.join(tmpdir(), 'assay-replicas-'));
  });
  after(async () => {
    await database.drop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('all migrate and start, and exactly one bootstraps the admin', async () => {
    const replicas = 8;
    const starts = await Promise.allSettled(
      Array.from({ length: replicas }, (_, i) =>
        createService(
          loadConfig({ DATABASE_URL: database.url, ASSAY_DATA_DIR: path.join(dataDir, `replica-${i}`) }),
          { logger: silent },
        ),
      ),
    );
    const services = starts.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
    try {
      assert.deepEqual(
        starts.flatMap((s) => (s.status === 'rejected' ? [String(s.reason)] : [])),
        [],
        'every replica starts',
      );
      const keys = services.flatMap((s) => (s.bootstrapKey ? [s.bootstrapKey] : []));
      assert.equal(keys.length, 1);
      assert.equal((await whoAmI(services[0]!, keys[0]!)).status, 200);
    } finally {
      await Promise.all(services.map((s) => s.close()));
    }
  });
});
