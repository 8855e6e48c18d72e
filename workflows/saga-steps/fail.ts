// Failing the run with a reason the researcher reads.
import type { FailureReason } from '@assay/contract';
import { service } from './activities.ts';
import type { Saga } from './saga.ts';

export async function fail(saga: Saga, reason: FailureReason, message: string): Promise<void> {
  await service.failRun(saga.runId, reason, message);
}

/** An activity's failure names its cause's message; anything else its own. */
export function describeError(error: unknown): string {
  const cause = (error as { cause?: { message?: string } }).cause;
  return cause?.message ?? (error instanceof Error ? error.message : String(error));
}
