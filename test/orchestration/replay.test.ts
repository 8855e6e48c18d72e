// Recorded histories (test/fixtures/workflow-histories, saved by the orchestration tests with
// ASSAY_RECORD_HISTORIES=1) replayed against today's workflow code: a change that would break workflows
// still allowed to run fails here with a nondeterminism error.
import assert from 'node:assert/strict';
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { Worker, bundleWorkflowCode } from '@temporalio/worker';
import { installRuntimeOnce, workflowBundle } from '../../src/worker.ts';

const dir = path.resolve(import.meta.dirname, '../fixtures/workflow-histories');
// Out of `dir`, so that re-recording (which writes the same names) cannot overwrite them.
const retiredDir = path.join(dir, 'retired');

/**
 * Histories whose path the workflow code no longer has, kept (in `retired/`) to show that it is gone. The
 * managed runs recorded on 2026-11-23 walk the path before `signal-driven-watch` (a polled watch, a four-step
 * conclusion), which is retired: that patch is deprecated (`deprecatePatch`). Only code replaced on
 * 2026-11-24 started such executions, and each one ended or continued as new (on newer code) within a slice
 * set, unless it waited for its recovery run; a deployment that may still have one open checks before
 * upgrading (docs/architecture.md, "How a managed run flows"). The sweeps of that day stay: the sweep's path
 * before `lean-saga` is kept.
 */
const RETIRED = new Map(
  [
    'managed-run-cancelled-in-temporal.json',
    'managed-run-heartbeat-timeout.json',
    'managed-run-instance-lost-recovered.json',
    'managed-run-no-start.json',
    'managed-run-succeeded.json',
    'managed-run-worker-killed.json',
  ].map((file) => [file, 'before signal-driven-watch, retired with deprecatePatch']),
);

/** Every path the code keeps, as `workflow type: patch markers`, needs a history that walks it. */
const KEPT_PATHS = [
  'managedRun: signal-driven-watch',
  'managedRun: lean-saga',
  'managedRun: lean-saga + compute-queue',
  'variationSweep: none',
  'variationSweep: lean-saga',
  'trialSweep: none',
];

interface History {
  events: {
    workflowExecutionStartedEventAttributes?: { workflowType: { name: string } };
    markerRecordedEventAttributes?: {
      markerName: string;
      details: Record<string, { payloads: { data: string }[] }>;
    };
  }[];
}

async function readHistory(file: string, from = dir): Promise<History> {
  return JSON.parse(await readFile(path.join(from, file), 'utf8'));
}

/** The history's workflow type and the patches its markers name. */
function pathOf(history: History): string {
  const type = history.events[0]?.workflowExecutionStartedEventAttributes?.workflowType.name;
  const patches = history.events
    .map((event) => event.markerRecordedEventAttributes)
    .filter((marker) => marker?.markerName === 'core_patch')
    .map((marker) => {
      const data = marker!.details['patch-data']!.payloads[0]!.data;
      return (JSON.parse(Buffer.from(data, 'base64').toString('utf8')) as { id: string }).id;
    });
  return `${type}: ${patches.join(' + ') || 'none'}`;
}

async function recorded(from = dir): Promise<string[]> {
  return (await readdir(from)).filter((f) => f.endsWith('.json')).sort();
}

test('every recorded history of a kept path replays without a nondeterminism error', async () => {
  installRuntimeOnce();
  const files = await recorded();
  const paths = new Set<string>();
  for (const file of files) paths.add(pathOf(await readHistory(file)));
  assert.deepEqual(
    [...paths].sort(),
    [...KEPT_PATHS].sort(),
    'the histories walk every kept path, only those',
  );
  const bundle = await workflowBundle();
  for (const file of files) {
    await assert.doesNotReject(
      Worker.runReplayHistory({ workflowBundle: bundle }, await readHistory(file), file),
      `replay of ${file}`,
    );
  }
});

test('every retired history is recorded and no longer replays: its path is really gone', async () => {
  installRuntimeOnce();
  const files = await recorded(retiredDir);
  assert.deepEqual(files, [...RETIRED.keys()].sort(), 'every retired history is listed with its reason');
  const bundle = await workflowBundle();
  for (const [file, why] of RETIRED) {
    await assert.rejects(
      Worker.runReplayHistory({ workflowBundle: bundle }, await readHistory(file, retiredDir), file),
      (error: Error) => error.name === 'DeterminismViolationError',
      `${file} (${why}) fails replay`,
    );
  }
});

test('replay does catch a change: a managedRun with one extra step fails on the recorded history', async () => {
  installRuntimeOnce();
  const changed = await bundleWorkflowCode({
    workflowsPath: path.resolve(import.meta.dirname, '../fixtures/changed-workflows/index.ts'),
    logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} },
  });
  const history = await readHistory('managed-run-succeeded-lean-saga.json');
  await assert.rejects(
    Worker.runReplayHistory({ workflowBundle: changed }, history, 'changed'),
    (error: Error) => error.name === 'DeterminismViolationError',
  );
});
