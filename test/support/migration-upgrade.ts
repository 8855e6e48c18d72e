import { after, before } from 'node:test';
import pg from 'pg';
import { startTestService, type TestService } from './service.ts';

/**
 * For a suite that checks a migration's backfill: a service on a fresh PostgreSQL database (`primary`), SQL
 * on that database (`rows`), and `reapply(undo)`, which runs `undo` to take the migration back out (with the
 * rows the test wrote left in) and starts a replica, whose start applies the migration again. Closed after
 * the suite.
 */
export function migrationUpgrade(env: Record<string, string> = {}) {
  let primary: TestService | undefined;
  let upgraded: TestService | undefined;
  let client: pg.Client | undefined;
  before(async () => {
    primary = await startTestService({ env });
    client = new pg.Client({ connectionString: primary.databaseUrl });
    await client.connect();
  });
  after(async () => {
    await client?.end();
    await upgraded?.close();
    await primary?.close();
  });
  return {
    get primary(): TestService {
      return primary!;
    },
    rows: async (sql: string) => (await client!.query(sql)).rows,
    async reapply(undo: string): Promise<TestService> {
      await client!.query(undo);
      upgraded = await startTestService({ replicaOf: primary, env });
      return upgraded;
    },
  };
}
