// PostgreSQL session limits of the service's own pool: a runaway statement or an abandoned transaction ends
// at the server instead of holding a connection (and its locks) forever.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { toErrorResponse } from '../../src/server/http/error-handler.ts';
import { startTestService, type TestService } from '../support/service.ts';

describe('PostgreSQL timeouts from the settings', () => {
  let t: TestService;
  before(async () => {
    t = await startTestService({
      env: { ASSAY_PG_STATEMENT_TIMEOUT_MS: '400', ASSAY_PG_IDLE_IN_TX_TIMEOUT_MS: '300' },
    });
  });
  after(() => t.close());

  it('every pooled connection carries the configured limits', async () => {
    // Several at once, so the pool has to open more than one connection.
    const shown = await Promise.all(
      Array.from({ length: 4 }, () =>
        t.service.db.transaction(async (tx) => ({
          statement: await tx.query<{ statement_timeout: string }>('SHOW statement_timeout'),
          idle: await tx.query<{ idle_in_transaction_session_timeout: string }>(
            'SHOW idle_in_transaction_session_timeout',
          ),
        })),
      ),
    );
    for (const { statement, idle } of shown) {
      assert.equal(statement[0]!.statement_timeout, '400ms');
      assert.equal(idle[0]!.idle_in_transaction_session_timeout, '300ms');
    }
  });

  it('a statement over the limit fails promptly and answers 503 database_timeout', async () => {
    const started = Date.now();
    const error = await t.service.db.query('SELECT pg_sleep(5)').then(
      () => assert.fail('pg_sleep(5) outlived a 400 ms statement timeout'),
      (e: unknown) => e,
    );
    assert.ok(Date.now() - started < 4000, 'cancelled by the server, long before the statement ends');
    const mapped = toErrorResponse(error);
    assert.equal(mapped.status, 503);
    assert.equal(mapped.body.error.code, 'database_timeout');
    // The pool is still usable afterwards.
    assert.deepEqual(await t.service.db.query('SELECT 1 AS one'), [{ one: 1 }]);
  });

  it('a transaction left idle past the limit is ended by the server', async () => {
    await assert.rejects(
      t.service.db.transaction(async (tx) => {
        await tx.query('SELECT 1');
        await sleep(1000);
        await tx.query('SELECT 1');
      }),
    );
    assert.deepEqual(await t.service.db.query('SELECT 1 AS one'), [{ one: 1 }]);
  });
});
