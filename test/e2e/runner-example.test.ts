import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { repoRoot } from '../support/assay-server.ts';
import { addVariation, createExperiment, createRun } from '../support/fixtures.ts';
import { startTestService, type TestService } from '../support/service.ts';

const run = promisify(execFile);

describe('examples/runner.ts, the one-screen runner', () => {
  let t: TestService;
  let home: string;
  before(async () => {
    t = await startTestService({ listen: true });
    home = await mkdtemp(path.join(tmpdir(), 'assay-runner-home-'));
  });
  after(async () => {
    await t.close();
    await rm(home, { recursive: true, force: true });
  });

  it('reads its config, starts, heartbeats, uploads its outputs and succeeds', async () => {
    const key = t.adminKey;
    const e = await createExperiment(t, key);
    await addVariation(t, key, e.id, 'steps: 3\nlr: 0.01\n');
    await t.as(key).post(`/experiments/${e.id}/commit`);
    const r = await createRun(t, key, e.id);
    await run(process.execPath, [path.join(repoRoot, 'examples/runner.ts')], {
      env: {
        PATH: process.env.PATH,
        HOME: home,
        SERVICE_SERVER_URL: t.url,
        SERVICE_API_KEY: key,
        SERVICE_EXPERIMENT_ID: e.id,
        SERVICE_VARIATION: '1',
        SERVICE_RUN: String(r.r),
      },
      timeout: 60_000,
    });
    const done = (await t.as(key).get(r.path)).body;
    assert.equal(done.state, 'succeeded');
    assert.equal(done.environment.node, process.versions.node);
    const outputs = (await t.as(key).get(`/assets?experiment_id=${e.id}&n=1&r=${r.r}`)).body.items;
    assert.equal(outputs.length, 3);
    assert.ok(outputs.every((a: any) => a.state === 'ready' && a.kind === 'output'));
  });
});
