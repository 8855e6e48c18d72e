// The workflows' signal and query, defined once: the workflows handle them, the service sends them
// (src/orchestrator/temporal-orchestrator.ts). Nothing here runs activities, so the service may import it.
import { defineQuery, defineSignal } from '@temporalio/workflow';
import type { SweepProgress } from '@assay/contract';

/** Sent by the service when a run starts, ends or is asked to cancel: a nudge to look now instead of at the next poll. */
export const runChangedSignal = defineSignal('runChanged');

/** A sweep's progress, answered from the workflow's own state. */
export const progressQuery = defineQuery<SweepProgress>('progress');
