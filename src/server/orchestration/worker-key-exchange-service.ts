import { parseToken, secretMatches } from '../auth/api-key-token.ts';
import type { Principal } from '../auth/principal.ts';
import { WORKER_SCOPES } from '../auth/scopes.ts';
import { insertKey } from '../api-keys/api-key-repository.ts';
import type { Db } from '../db/database.ts';
import { conflict, notFound, unauthorized } from '../http/errors.ts';
import { isTerminalRunState } from '@assay/contract';
import { lockManagedRun } from './orchestrator-repository.ts';
import * as repo from './worker-key-exchange-repository.ts';

// A managed instance is started with a one-time exchange token, not a worker key: whatever can read the
// instance's launch data (EC2 user data) gets a token that is useless once the runner has traded it, and that
// dies on its own within minutes. The worker key itself is minted at the exchange, so it never exists in the
// workflow history or the launch data.

const isTerminal = (state: string) => isTerminalRunState(state);

/**
 * A fresh exchange token for the run's instance. Nothing is revoked: two overlapping provisioning attempts
 * may each mint one, and whichever ends up in the instance must still work (the run's other tokens are voided
 * by the first exchange, and by the revocation that ends the saga).
 */
export async function mintExchangeToken(db: Db, principal: Principal, runId: string, ttlMs: number) {
  return db.transaction(async (tx) => {
    const run = await lockManagedRun(tx, runId);
    if (!run) throw notFound('managed run');
    if (isTerminal(run.state))
      throw conflict('run_ended', `the run is ${run.state}; it needs no worker key`, { state: run.state });
    if (!run.provisioned_by)
      throw conflict('run_not_provisioned', 'the run has no provisioning user to own its worker key');
    return repo.insertExchangeToken(tx, { runId, mintedByKeyId: principal.keyId, ttlMs });
  });
}

/**
 * Trades an exchange token for its run's worker key, once: owned by the user who provisioned the run, in the
 * lineage of the orchestrator key that asked for the token (revoking that key revokes this one). A spent,
 * expired or revoked token answers 401 and changes nothing; no earlier key of the run is revoked.
 */
export async function exchangeWorkerKey(db: Db, token: string, ttlDays: number) {
  const parsed = parseToken(token);
  if (parsed?.kind !== 'exchange') throw unauthorized('not an exchange token');
  return db.transaction(async (tx) => {
    const exchange = await repo.lockExchange(tx, parsed.id);
    if (!exchange || !secretMatches(parsed.secret, exchange.secret_hash))
      throw unauthorized('invalid exchange token');
    if (exchange.spent) throw unauthorized('exchange token already used');
    if (exchange.expired) throw unauthorized('exchange token expired');
    if (exchange.minter_revoked) throw unauthorized('exchange token revoked');
    if (isTerminal(exchange.run_state)) throw unauthorized('exchange token void: its run has ended');
    // One runner per run: a token minted after the exchange (a late provisioning retry) buys nothing.
    if (await repo.runWorkerKeyIssued(tx, exchange.run_id))
      throw unauthorized('exchange token void: its run’s worker key was already issued');
    if (!exchange.provisioned_by)
      throw conflict('run_not_provisioned', 'the run has no provisioning user to own its worker key');
    const { row, token: key } = await insertKey(tx, {
      userId: exchange.provisioned_by,
      kind: 'worker',
      description: `managed run ${exchange.workflow_id}`,
      scopes: WORKER_SCOPES,
      runId: exchange.run_id,
      ttlDays,
      mintedByKeyId: exchange.minted_by_key_id,
    });
    await repo.spendRunExchanges(tx, { id: exchange.id, runId: exchange.run_id, workerKeyId: row.id });
    return { id: row.id, key, run_id: exchange.run_id };
  });
}
