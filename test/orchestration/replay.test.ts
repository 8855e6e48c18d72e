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

/**
 * Histories whose path the workflow code no longer has, kept to show that it is gone. The managed runs recorded
 * on 2026-11-23 walk the path before `signal-driven-watch` (a polled watch, a four-step conclusion), which is
 * retired: that patch is deprecated (`deprecatePatch`). Only code replaced on 2026-11-24 started such
 * executions, and each one ended or continued as new (on the code of its day) within a slice set; a deployment
 * that may still have one open checks before upgrading (docs/architecture.md, "How a managed run flows").
 * The sweeps of that day stay: the sweep's path before `lean-saga` is kept.
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
  'variationSweep: none',
  'variationSweep: lean-saga',
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

async function readHistory(file: string): Promise<History> {
  return JSON.parse(await readFile(path.join(dir, file), 'utf8'));
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

async function recorded(): Promise<string[]> {
  return (await readdir(dir)).filter((f) => f.endsWith('.json')).sort();
}

test('every recorded workflow history still allowed to run replays without a nondeterminism error', async () => {
  installRuntimeOnce();
  const files = (await recorded()).filter((f) => !RETIRED.has(f));
  const paths = new Set<string>();
  for (const file of files) paths.add(pathOf(await readHistory(file)));
  for (const kept of KEPT_PATHS)
    assert.ok(paths.has(kept), `a history walks ${kept}: ${[...paths].join(', ')}`);
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
  const files = await recorded();
  const bundle = await workflowBundle();
  for (const [file, why] of RETIRED) {
    assert.ok(files.includes(file), `${file} (${why}) is recorded`);
    await assert.rejects(
      Worker.runReplayHistory({ workflowBundle: bundle }, await readHistory(file), file),
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
