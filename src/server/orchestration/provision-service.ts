import type { FastifyBaseLogger } from 'fastify';
import type { Principal } from '../auth/principal.ts';
import type { Db } from '../db/database.ts';
import { conflict } from '../http/errors.ts';
import type { RunKey, RunRow } from '../runs/run-repository.ts';
import { getRun, refuseWorkerKey } from '../runs/run-service.ts';
import { callOrchestrator, requireOrchestrator } from './orchestrator-calls.ts';
import type { Orchestrator, RunLabels } from '../../orchestrator/orchestrator.ts';
import type { Queryable } from '../db/database.ts';
import { markManaged } from './managed-run-repository.ts';
import { findWorkflowLabels } from './orchestrator-repository.ts';
import type { ConfigPolicy } from '../variations/config-policy.ts';
import { checkProvisionable } from '../variations/launch-policy.ts';

/** A run workflow's labels in the Temporal UI (search attributes and memo). */
export async function runLabels(
  db: Queryable,
  run: { experiment_id: string; sweep_id: string | null },
): Promise<RunLabels> {
  const found = await findWorkflowLabels(db, run.experiment_id);
  return {
    experimentName: found?.experimentName ?? '',
    owner: found?.owner ?? '',
    ...(run.sweep_id ? { sweepId: run.sweep_id } : {}),
  };
}

/**
 * Makes a pending run managed and starts its workflow. Both halves are idempotent, so a repeat (or a retry
 * after Temporal was unreachable) answers the same workflow; a run that already left pending on its own is
 * refused. A run still pending whose workflow closed without concluding it gets a new execution of
 * that workflow. `priority` (the compute queue's) is set while the run is pending; a repeat without one keeps
 * it.
 */
export async function provisionRun(
  db: Db,
  principal: Principal,
  key: RunKey,
  orchestrator: Orchestrator | undefined,
  log: FastifyBaseLogger,
  policy: ConfigPolicy,
  priority?: number,
): Promise<RunRow> {
  refuseWorkerKey(principal);
  await checkProvisionable(db, principal, key, policy);
  const orch = requireOrchestrator(orchestrator);
  const row = await markManaged(db, principal, key, priority);
  if (!row) {
    const run = await getRun(db, principal, key);
    throw conflict(
      'invalid_state_transition',
      `only a pending run can be provisioned; this one is ${run.state} and runs on its own`,
      {
        state: run.state,
        failure_reason: run.failure_reason,
        allowed_from: ['pending'],
      },
    );
  }
  const ref = {
    runId: row.id,
    experimentId: row.experiment_id,
    n: row.n,
    r: row.r,
    workflowId: row.workflow_id!,
  };
  const labels = await runLabels(db, row);
  const restartClosed = row.state === 'pending';
  await callOrchestrator(log, `starting workflow ${ref.workflowId}`, () =>
    orch.startManagedRun(ref, labels, { restartClosed }),
  );
  return row;
}
