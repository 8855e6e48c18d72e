// Recorded histories (test/fixtures/workflow-histories, saved by the orchestration tests with
// ASSAY_RECORD_HISTORIES=1) replayed against today's workflow code: a change that would break workflows
// already running in production fails here with a nondeterminism error.
import assert from 'node:assert/strict';
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { Worker, bundleWorkflowCode } from '@temporalio/worker';
import { installRuntimeOnce, workflowBundle } from '../../src/worker.ts';

const dir = path.resolve(import.meta.dirname, '../fixtures/workflow-histories');

test('every recorded workflow history replays without a nondeterminism error', async () => {
  installRuntimeOnce();
  const files = (await readdir(dir)).filter((f) => f.endsWith('.json')).sort();
  assert.ok(
    files.some((f) => f.startsWith('managed-run-')) && files.some((f) => f.startsWith('sweep-')),
    `histories of both workflow types are recorded: ${files.join(', ')}`,
  );
  const bundle = await workflowBundle();
  for (const file of files) {
    const history = JSON.parse(await readFile(path.join(dir, file), 'utf8'));
    await assert.doesNotReject(
      Worker.runReplayHistory({ workflowBundle: bundle }, history, file),
      `replay of ${file}`,
    );
  }
});

test('replay does catch a change: a managedRun with one extra step fails on the recorded history', async () => {
  installRuntimeOnce();
  const changed = await bundleWorkflowCode({
    workflowsPath: path.resolve(import.meta.dirname, '../fixtures/changed-workflows/index.ts'),
    logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} },
  });
  const history = JSON.parse(await readFile(path.join(dir, 'managed-run-succeeded.json'), 'utf8'));
  await assert.rejects(
    Worker.runReplayHistory({ workflowBundle: changed }, history, 'changed'),
    (error: Error) => error.name === 'DeterminismViolationError',
  );
});
