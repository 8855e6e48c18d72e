import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { addVariation, createExperiment } from '../support/fixtures.ts';
import { startTestService, type TestService } from '../support/service.ts';

const run = promisify(execFile);
const repoRoot = path.resolve(import.meta.dirname, '../..');

type Operation = { operationId?: string; requestBody?: { required?: boolean } };
type OpenApi = { servers?: { url: string }[]; paths: Record<string, Record<string, Operation>> };

/**
 * The service's /openapi.json as generators read it: valid for Redocly's recommended rules, with
 * unique names.
 */
describe('openapi.json: a document clients can be generated from', () => {
  let t: TestService;
  let dir: string;
  let openapi: OpenApi;

  before(async () => {
    t = await startTestService({ pglite: true, env: { ASSAY_PUBLIC_URL: 'https://assay.example.org' } });
    dir = await mkdtemp(path.join(tmpdir(), 'assay-openapi-'));
    const res = await t.request('GET', '/openapi.json');
    assert.equal(res.status, 200);
    openapi = res.body;
  });
  after(async () => {
    await t?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const operations = () =>
    Object.entries(openapi.paths).flatMap(([p, methods]) =>
      Object.entries(methods).map(([method, op]) => ({ label: `${method.toUpperCase()} ${p}`, op })),
    );

  it('passes `redocly lint` with the recommended rules (redocly.yaml) without errors or warnings', async () => {
    const file = path.join(dir, 'openapi.json');
    await writeFile(file, JSON.stringify(openapi));
    const bin = path.join(repoRoot, 'node_modules', '.bin', 'redocly');
    const { stdout, stderr } = await run(bin, ['lint', '--format=json', file], {
      cwd: repoRoot,
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
      maxBuffer: 64 * 1024 * 1024,
    }).catch((error: { stdout: string; stderr: string }) => {
      assert.fail(`redocly lint failed:\n${error.stdout.slice(0, 4000)}\n${error.stderr.slice(0, 2000)}`);
    });
    const report = JSON.parse(stdout) as { totals: { errors: number; warnings: number } };
    assert.deepEqual(report.totals, { ...report.totals, errors: 0, warnings: 0 }, stderr);
  });

  it('names every operation, each name once', () => {
    const missing = operations().filter(({ op }) => !op.operationId);
    assert.deepEqual(
      missing.map((o) => o.label),
      [],
    );
    const ids = operations().map(({ op }) => op.operationId!);
    assert.deepEqual(
      ids.filter((id, i) => ids.indexOf(id) !== i),
      [],
    );
    assert.ok(
      ids.every((id) => /^[a-z][A-Za-z]+$/.test(id)),
      `camelCase: ${ids.join(', ')}`,
    );
  });

  it("names operations after the client's methods", () => {
    const byLabel = Object.fromEntries(operations().map(({ label, op }) => [label, op.operationId]));
    assert.equal(byLabel['POST /experiments'], 'createExperiment');
    assert.equal(byLabel['POST /experiments/{id}/commit'], 'commitExperiment');
    assert.equal(byLabel['POST /experiments/{id}/variations/{n}/runs/{r}/heartbeat'], 'heartbeatRun');
    assert.equal(byLabel['GET /orchestrator/runs/{run_id}'], 'getManagedRun');
  });

  it('serves from the configured public URL', () => {
    assert.deepEqual(
      openapi.servers?.map((s) => s.url),
      ['https://assay.example.org'],
    );
  });

  it('marks a body optional exactly where the service accepts none, and accepts none there', async () => {
    const optional = operations().filter(({ op }) => op.requestBody && op.requestBody.required === false);
    const labels = optional.map((o) => o.label);
    for (const expected of [
      'POST /experiments/{id}/variations/{n}/runs',
      'POST /experiments/{id}/variations/{n}/runs/{r}/heartbeat',
      'POST /experiments/{id}/variations/{n}/runs/{r}/succeed',
      'POST /experiments/{id}/commit',
    ])
      assert.ok(labels.includes(expected), `${expected} optional; optional: ${labels.join(', ')}`);
    const required = operations().filter(({ op }) => op.requestBody?.required === true);
    assert.ok(
      required.some((o) => o.label === 'POST /experiments'),
      'a body with required fields stays required',
    );

    // And the service agrees: a commit with no body at all answers 200.
    const experiment = await createExperiment(t, t.adminKey);
    await addVariation(t, t.adminKey, experiment.id);
    const committed = await t.request('POST', `/experiments/${experiment.id}/commit`, { key: t.adminKey });
    assert.equal(committed.status, 200, JSON.stringify(committed.body));
  });
});
