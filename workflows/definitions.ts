// The workflows' signal, query and search attributes, defined once: the workflows handle and set them, the
// service sends and sets them (src/orchestrator/temporal-orchestrator.ts). Nothing here runs activities, so
// the service may import it.
import { defineSearchAttributeKey, SearchAttributeType, type SearchAttributePair } from '@temporalio/common';
import { defineQuery, defineSignal } from '@temporalio/workflow';
import type { RunState, SweepProgress } from '@assay/contract';
import type { ManagedRunRef, WorkflowLabels } from './saga-types.ts';

/**
 * Sent by the service when a run starts, ends or is asked to cancel: a nudge to look now instead of at the
 * next poll.
 */
export const runChangedSignal = defineSignal('runChanged');

/**
 * Sent by a sweep's managed run to the sweep as soon as its run is terminal, before the saga concludes
 * (outputs, instance, key): the sweep starts its next run then, not after the conclusion.
 */
export const runEndedSignal = defineSignal<[{ runId: string; state: RunState }]>('runEnded');

/** A sweep's progress, answered from the workflow's own state. */
export const progressQuery = defineQuery<SweepProgress>('progress');

/**
 * The search attributes of managed-run and sweep workflows, so that "every run of this sweep" is one filter
 * in the Temporal UI (`AssaySweepId = '…'`). The embedded dev server registers them at start; a cluster's
 * operator registers them once (docs/production.md).
 */
export const SEARCH_ATTRIBUTES = {
  experimentId: defineSearchAttributeKey('AssayExperimentId', SearchAttributeType.KEYWORD),
  sweepId: defineSearchAttributeKey('AssaySweepId', SearchAttributeType.KEYWORD),
  variation: defineSearchAttributeKey('AssayVariation', SearchAttributeType.INT),
  run: defineSearchAttributeKey('AssayRun', SearchAttributeType.INT),
  owner: defineSearchAttributeKey('AssayOwner', SearchAttributeType.KEYWORD),
};

/**
 * `Name=Type` as `temporal server start-dev --search-attribute` and `temporal operator search-attribute
 * create` take them.
 */
export const SEARCH_ATTRIBUTE_DEFINITIONS = Object.values(SEARCH_ATTRIBUTES).map(
  (key) => `${key.name}=${key.type === SearchAttributeType.INT ? 'Int' : 'Keyword'}`,
);

/** A sweep's search attributes; none when the server has them not registered. */
export function sweepSearchAttributes(
  sweep: { sweepId: string; experimentId: string },
  labels: WorkflowLabels,
): SearchAttributePair[] {
  if (!labels.indexed) return [];
  return [
    { key: SEARCH_ATTRIBUTES.experimentId, value: sweep.experimentId },
    { key: SEARCH_ATTRIBUTES.sweepId, value: sweep.sweepId },
    { key: SEARCH_ATTRIBUTES.owner, value: labels.owner },
  ];
}

/** A managed run's search attributes (its sweep's id when it has one); none when not registered. */
export function runSearchAttributes(
  run: Pick<ManagedRunRef, 'experimentId' | 'n' | 'r'>,
  labels: WorkflowLabels,
): SearchAttributePair[] {
  if (!labels.indexed) return [];
  return [
    { key: SEARCH_ATTRIBUTES.experimentId, value: run.experimentId },
    ...(labels.sweepId ? [{ key: SEARCH_ATTRIBUTES.sweepId, value: labels.sweepId }] : []),
    { key: SEARCH_ATTRIBUTES.variation, value: run.n },
    { key: SEARCH_ATTRIBUTES.run, value: run.r },
    { key: SEARCH_ATTRIBUTES.owner, value: labels.owner },
  ];
}

/** The memo every Assay workflow carries: what the Temporal UI shows beside the ids. */
export const workflowMemo = (labels: WorkflowLabels) => ({ experimentName: labels.experimentName });
