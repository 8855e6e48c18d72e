import { unavailable } from '../http/errors.ts';
import type { Orchestrator } from '../../orchestrator/orchestrator.ts';

interface Log {
  debug(o: object, m: string): void;
  warn(o: object, m: string): void;
}

/** The orchestrator, or 503 when this service runs without one; checked before anything is written. */
export function requireOrchestrator(orchestrator: Orchestrator | undefined): Orchestrator {
  if (!orchestrator)
    throw unavailable(
      'orchestrator_unavailable',
      'this server runs without an orchestrator (Temporal); managed runs and sweeps are not available',
    );
  return orchestrator;
}

/**
 * Calls the orchestrator after the database changes are made: a failure answers 503, and what was written
 * stays, so repeating the same request finishes the job (every orchestrator call is idempotent).
 */
export async function callOrchestrator<T>(log: Log, what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    log.warn({ err }, `orchestrator call failed: ${what}`);
    throw unavailable(
      'orchestrator_unavailable',
      `Temporal is unreachable (${what} failed); what was recorded is kept: repeat the request to finish`,
    );
  }
}

/**
 * Nudges a run's workflow after its run changed; never awaited in a request and never fails one (the workflow
 * also polls).
 */
export function notifyRunChanged(
  orchestrator: Orchestrator | undefined,
  workflowId: string | null | undefined,
  log: Pick<Log, 'debug'>,
): void {
  if (!orchestrator || !workflowId) return;
  let pending: Promise<void>;
  try {
    pending = orchestrator.notifyRunChanged(workflowId);
  } catch (err) {
    pending = Promise.reject(err);
  }
  pending.catch((err: unknown) =>
    log.debug(
      { err, workflowId },
      'could not signal the run workflow; it will see the change on its next poll',
    ),
  );
}

/** The workflow in the Temporal UI, when there is an orchestrator that knows one. */
export function workflowUrlOf(
  orchestrator: Orchestrator | undefined,
  workflowId: string | null,
): string | null {
  return (workflowId && orchestrator?.workflowUrl(workflowId)) || null;
}
