import assert from 'node:assert/strict';
import { addVariation, createExperiment, createRun } from './fixtures.ts';
import type { Api } from './service.ts';

/** A run of a seeded experiment: its ids and its API path. */
export interface SeededRun {
  id: string;
  experimentId: string;
  n: number;
  r: number;
  path: string;
}

/** Every kind of object one owner can have in one scope, seeded through the public API. */
export interface SeededObjects {
  /** The organization the objects belong to, or null for the owner's personal scope. */
  organizationId: string | null;
  /** Committed, variations 1 and 2. */
  experimentId: string;
  /** Draft, variation 1, a child of `experimentId` in the lineage graph. */
  draftId: string;
  /** The experiment a sweep turned into variations and managed runs. */
  sweepExperimentId: string;
  sweepId: string;
  /**
   * Of `experimentId` variation 1: r1 pending (config read), r2 running (metrics loss and acc), r3
   * managed (provisioned).
   */
  runs: SeededRun[];
  managedRun: SeededRun;
  /**
   * Ready inline report (searchable by `searchWord`), ready checkpoint of run r2, pending presigned output.
   */
  assetIds: { report: string; checkpoint: string; pending: string };
  /** A word that appears in this seed's searchable report only. */
  searchWord: string;
  /** A key minted by the owner (not the one it calls with). */
  apiKeyId: string;
}

/**
 * Seeds experiments, variations, runs (pending, running, managed), a sweep and assets for `key` in one scope
 * (`organizationId`, or null for personal). Provision and sweeps need the service started with
 * an orchestrator.
 * `label` names the objects; `searchWord` is a word only this seed's report contains; `sharedWord` goes into
 * every seed's report, so a search for it would show any leak between seeds.
 */
export async function seedObjects(
  api: Api,
  key: string,
  opts: { organizationId: string | null; label: string; searchWord: string; sharedWord?: string },
): Promise<SeededObjects> {
  const as = api.as(key);
  const scope = { organization_id: opts.organizationId ?? 'personal' };
  const experiment = await createExperiment(api, key, { name: `${opts.label} experiment`, ...scope });
  await addVariation(api, key, experiment.id, 'lr: 0.1\nlaunch:\n  command: python train.py\n');
  await addVariation(api, key, experiment.id, 'lr: 0.01\n');
  ok(await as.post(`/experiments/${experiment.id}/commit`), 200);
  const pending = await createRun(api, key, experiment.id);
  ok(await as.get(`${pending.path}/config`), 200);
  const running = await createRun(api, key, experiment.id);
  ok(await as.get(`${running.path}/config`), 200);
  ok(await as.post(`${running.path}/start`, { environment: { os: 'linux' } }), 200);
  ok(
    await as.post(`${running.path}/metrics`, {
      metrics: [
        { key: 'loss', step: 0, value: 1.5 },
        { key: 'acc', step: 0, value: 0.25 },
      ],
    }),
    200,
  );
  const managed = await createRun(api, key, experiment.id);
  ok(await as.post(`${managed.path}/provision`), 202);
  const runs = [pending, running, managed].map((r) => ({
    id: r.id,
    experimentId: experiment.id,
    n: 1,
    r: r.r,
    path: r.path,
  }));

  const draft = await createExperiment(api, key, {
    name: `${opts.label} draft`,
    parent_ids: [experiment.id],
    ...scope,
  });
  await addVariation(api, key, draft.id);
  const sweepExperiment = await createExperiment(api, key, { name: `${opts.label} sweep`, ...scope });
  const sweep = ok(
    await as.post(`/experiments/${sweepExperiment.id}/sweeps`, {
      base_yaml: 'lr: 0.1\nlaunch:\n  command: sleep 1\n',
      grid: { lr: [0.1, 0.01] },
      concurrency: 1,
    }),
    202,
  );

  const words = [opts.searchWord, opts.sharedWord].filter(Boolean).join(' ');
  const report = ok(
    await as.post('/assets', {
      kind: 'report',
      name: `${opts.label} notes`,
      experiment_id: experiment.id,
      content: `Notes on ${words}.`,
    }),
    201,
  );
  const checkpoint = ok(
    await as.post('/assets', {
      kind: 'checkpoint',
      name: 'step-100',
      run: { experiment_id: experiment.id, n: 1, r: running.r },
      content: 'weights',
    }),
    201,
  );
  const pendingAsset = ok(
    await as.post('/assets', {
      kind: 'output',
      name: `${opts.label} output`,
      presign: true,
      run: { experiment_id: experiment.id, n: 1, r: running.r },
      components: [{ name: 'metrics.json', size: 2, content_type: 'application/json' }],
    }),
    201,
  );
  const minted = ok(
    await as.post('/api-keys', { description: `${opts.label} spare`, scopes: ['experiments:read'] }),
    201,
  );
  return {
    organizationId: opts.organizationId,
    experimentId: experiment.id,
    draftId: draft.id,
    sweepExperimentId: sweepExperiment.id,
    sweepId: sweep.id,
    runs,
    managedRun: runs[2]!,
    assetIds: { report: report.id, checkpoint: checkpoint.id, pending: pendingAsset.id },
    searchWord: opts.searchWord,
    apiKeyId: minted.id,
  };
}

function ok(res: { status: number; body: any }, status: number) {
  assert.equal(res.status, status, JSON.stringify(res.body));
  return res.body;
}
