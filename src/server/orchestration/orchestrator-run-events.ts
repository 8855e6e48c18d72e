import type { Orchestrator } from '../../orchestrator/orchestrator.ts';
import type { RunEvents } from '../runs/run-events.ts';
import { notifyRunChanged, workflowUrlOf } from './orchestrator-calls.ts';

/** The runs feature's events, told to the orchestrator: a moved run's workflow is signalled. */
export function orchestratorRunEvents(orchestrator: Orchestrator | undefined): RunEvents {
  return {
    changed: (workflowId, log) => notifyRunChanged(orchestrator, workflowId, log),
    workflowUrl: (workflowId) => workflowUrlOf(orchestrator, workflowId),
  };
}
