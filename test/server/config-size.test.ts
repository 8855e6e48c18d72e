// YAML aliases repeat what they point at: a small document can expand to many times its size. Every
// config (a variation's, a sweep's base, each point) is bounded by its expanded size, nothing stored past it.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FakeOrchestrator } from '../support/fake-orchestrator.ts';
import { createExperiment } from '../support/fixtures.ts';
import { startTestService, type TestService } from '../support/service.ts';

const LIMIT = 64 * 1024;

/** Under 3 KB of YAML for n ≤ 50: one 2,000-character anchor repeated `n` times; its JSON is about 2n KB. */
function aliased(n: number): string {
  const refs = Array.from({ length: n }, (_, i) => `  k${i}: *big\n`).join('');
  return `big: &big ${'x'.repeat(2000)}\nrepeated:\n${refs}`;
}

describe('the expanded size of a config is bounded by ASSAY_BODY_LIMIT_BYTES', () => {
  let t: TestService;
  let key: string;
  before(async () => {
    t = await startTestService({
      orchestrator: new FakeOrchestrator(),
      env: { ASSAY_BODY_LIMIT_BYTES: String(LIMIT), ASSAY_LOCAL_COMPUTE_USERS: 'all' },
    });
    key = (await t.createUser()).key;
  });
  after(() => t.close());

  function assertTooLarge(res: { status: number; body: any }, field: string) {
    assert.equal(res.status, 413, JSON.stringify(res.body).slice(0, 300));
    assert.equal(res.body.error.code, 'config_too_large');
    assert.match(res.body.error.message, new RegExp(`^${field}`));
    // The figure: how large it expands, and the limit.
    assert.match(res.body.error.message, /\d[\d,]* bytes/);
    assert.match(res.body.error.message, /65,536 bytes/);
    assert.ok(res.body.error.details.bytes > LIMIT, JSON.stringify(res.body.error.details));
    assert.equal(res.body.error.details.limit, LIMIT);
  }

  it('refuses a variation whose aliases expand past the limit, and stores nothing', async () => {
    const e = await createExperiment(t, key);
    const yaml = aliased(50);
    assert.ok(yaml.length < LIMIT / 8, 'the YAML itself is small');
    const res = await t.as(key).post(`/experiments/${e.id}/variations`, { config_yaml: yaml });
    assertTooLarge(res, 'config_yaml');
    assert.deepEqual((await t.as(key).get(`/experiments/${e.id}/variations`)).body.items, []);
    // Aliases within the limit still work.
    const small = await t.as(key).post(`/experiments/${e.id}/variations`, { config_yaml: aliased(10) });
    assert.equal(small.status, 201, JSON.stringify(small.body).slice(0, 300));
    assert.equal(small.body.config_json.repeated.k9.length, 2000);
    const edit = await t
      .as(key)
      .patch(`/experiments/${e.id}/variations/${small.body.n}`, { config_yaml: aliased(50) });
    assertTooLarge(edit, 'config_yaml');
    const kept = await t.as(key).get(`/experiments/${e.id}/variations/${small.body.n}`);
    assert.equal(kept.body.config_yaml, aliased(10), 'the edit stored nothing');
  });

  it('refuses a sweep whose base, or one of whose points, expands past the limit', async () => {
    const e = await createExperiment(t, key);
    const base = await t.as(key).post(`/experiments/${e.id}/sweeps`, {
      base_yaml: aliased(50),
      grid: { seed: [1, 2] },
    });
    assertTooLarge(base, 'base_yaml');
    // Each point is stored expanded: a base under the limit plus a point's large value goes over it.
    const point = await t.as(key).post(`/experiments/${e.id}/sweeps`, {
      base_yaml: aliased(20),
      list: [{ seed: 1 }, { note: 'y'.repeat(30_000) }],
    });
    assertTooLarge(point, 'sweep point 2');
    assert.deepEqual((await t.as(key).get(`/experiments/${e.id}/variations`)).body.items, []);
    assert.equal((await t.as(key).get(`/experiments/${e.id}`)).body.state, 'draft');
  });
});
