import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { addVariation, createExperiment } from '../support/fixtures.ts';
import { startTestService, type TestService } from '../support/service.ts';

describe('variations', () => {
  let t: TestService;
  let key: string;
  before(async () => {
    t = await startTestService();
    key = (await t.createUser()).key;
  });
  after(() => t.close());

  it('splits config_yaml into config_json, accelerate_config_json and launch_config', async () => {
    const e = await createExperiment(t, key);
    const yaml =
      'model:\n  layers: 12\nlr: 3.0e-4\naccelerate:\n  mixed_precision: bf16\nlaunch:\n  command: python train.py\n  instance_type: g5.xlarge\n';
    const res = await t.as(key).post(`/experiments/${e.id}/variations`, { config_yaml: yaml, name: 'base' });
    assert.equal(res.status, 201);
    assert.deepEqual(res.body.config_json, { model: { layers: 12 }, lr: 0.0003 });
    assert.deepEqual(res.body.accelerate_config_json, { mixed_precision: 'bf16' });
    assert.deepEqual(res.body.launch_config, { command: 'python train.py', instance_type: 'g5.xlarge' });
    assert.equal(res.body.config_yaml, yaml);
    assert.equal(res.body.name, 'base');
    const got = await t.as(key).get(`/experiments/${e.id}/variations/${res.body.n}`);
    assert.deepEqual(got.body, res.body);
  });

  it('numbers 50 concurrent creations 1..50 with no gap or duplicate', async () => {
    const e = await createExperiment(t, key);
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        t.as(key).post(`/experiments/${e.id}/variations`, { config_yaml: `seed: ${i}\n` }),
      ),
    );
    assert.ok(
      results.every((r) => r.status === 201),
      JSON.stringify(results.find((r) => r.status !== 201)?.body),
    );
    const numbers = results.map((r) => r.body.n).sort((a, b) => a - b);
    assert.deepEqual(
      numbers,
      Array.from({ length: 50 }, (_, i) => i + 1),
    );
    const list = await t.as(key).get(`/experiments/${e.id}/variations`);
    assert.equal(list.body.items.length, 50);
    // Each number kept the config it was created with.
    for (const r of results)
      assert.equal(list.body.items[r.body.n - 1].config_json.seed, r.body.config_json.seed);
  });

  it('answers bad YAML with 400 naming line and column, and writes nothing', async () => {
    const e = await createExperiment(t, key);
    const res = await t
      .as(key)
      .post(`/experiments/${e.id}/variations`, { config_yaml: 'lr: 0.1\nmodel:\n  layers: [1, 2\n' });
    assert.equal(res.status, 400);
    assert.equal(res.body.error.code, 'invalid_yaml');
    assert.match(res.body.error.message, /line \d+, column \d+/);
    assert.equal(typeof res.body.error.details.line, 'number');
    assert.equal(typeof res.body.error.details.column, 'number');
    const notMapping = await t.as(key).post(`/experiments/${e.id}/variations`, { config_yaml: '- a\n- b\n' });
    assert.equal(notMapping.status, 400);
    assert.equal((await t.as(key).get(`/experiments/${e.id}/variations`)).body.items.length, 0);
    // The failed attempts did not consume numbers.
    assert.equal((await addVariation(t, key, e.id)).n, 1);
  });

  it('refuses a launch block the contract does not allow with 400 naming the field, and writes nothing', async () => {
    const e = await createExperiment(t, key);
    const cases: [string, string][] = [
      ['launch:\n  command: python train.py\n  instance_type: large\n', 'launch.instance_type'],
      ['launch:\n  command: python train.py\n  instance-type: g5.xlarge\n', 'launch.instance-type'],
      ['launch:\n  command: 42\n', 'launch.command'],
      ['launch:\n  command: "   "\n', 'launch.command'],
      ['launch:\n  command: []\n', 'launch.command'],
      ['launch:\n  command: run\n  env:\n    LR: 0.1\n', 'launch.env.LR'],
      ['launch:\n  command: run\n  env:\n    "BAD NAME": x\n', 'launch.env.BAD NAME'],
      ['launch:\n  command: run\n  security_group_ids: [default]\n', 'launch.security_group_ids.0'],
      ['launch:\n  command: run\n  max_runtime_s: 0\n', 'launch.max_runtime_s'],
    ];
    for (const [yaml, field] of cases) {
      const res = await t.as(key).post(`/experiments/${e.id}/variations`, { config_yaml: yaml });
      assert.equal(res.status, 400, `${field}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.error.code, 'invalid_config');
      assert.equal(res.body.error.details.field, field);
      assert.ok(res.body.error.message.includes(field), res.body.error.message);
    }
    assert.equal((await t.as(key).get(`/experiments/${e.id}/variations`)).body.items.length, 0);

    // An edit is checked the same way; a full, valid block is stored as written.
    const created = await addVariation(t, key, e.id);
    const edit = await t
      .as(key)
      .patch(`/experiments/${e.id}/variations/${created.n}`, { config_yaml: 'launch:\n  image: ubuntu\n' });
    assert.equal(edit.status, 400);
    assert.equal(edit.body.error.details.field, 'launch.image');
    const launch = {
      command: ['python', 'train.py'],
      image: 'ami-0123456789abcdef0',
      instance_type: 'g5.xlarge',
      subnet_id: 'subnet-0123abcd',
      security_group_ids: ['sg-0123abcd'],
      iam_instance_profile: 'assay-runner',
      env: { WANDB_MODE: 'offline' },
      max_runtime_s: 3600,
    };
    const full = await t.as(key).patch(`/experiments/${e.id}/variations/${created.n}`, {
      config_yaml: `launch: ${JSON.stringify(launch)}\n`,
    });
    assert.equal(full.status, 200, JSON.stringify(full.body));
    assert.deepEqual(full.body.launch_config, launch);
  });

  it('edits while draft and freezes after commit (409), for creation too', async () => {
    const e = await createExperiment(t, key);
    await addVariation(t, key, e.id, 'lr: 1\n');
    const edited = await t.as(key).patch(`/experiments/${e.id}/variations/1`, { config_yaml: 'lr: 2\n' });
    assert.equal(edited.status, 200);
    assert.deepEqual(edited.body.config_json, { lr: 2 });
    await t.as(key).post(`/experiments/${e.id}/commit`);
    const create = await t.as(key).post(`/experiments/${e.id}/variations`, { config_yaml: 'lr: 3\n' });
    assert.equal(create.status, 409);
    assert.equal(create.body.error.code, 'variations_frozen');
    const edit = await t.as(key).patch(`/experiments/${e.id}/variations/1`, { name: 'x' });
    assert.equal(edit.status, 409);
    assert.deepEqual((await t.as(key).get(`/experiments/${e.id}/variations/1`)).body.config_json, { lr: 2 });
  });

  it('answers 404 for a missing variation and for a missing experiment', async () => {
    const e = await createExperiment(t, key);
    assert.equal((await t.as(key).get(`/experiments/${e.id}/variations/1`)).status, 404);
    assert.equal((await t.as(key).patch(`/experiments/${e.id}/variations/7`, { name: 'x' })).status, 404);
    const missing = '00000000-0000-4000-8000-000000000000';
    assert.equal(
      (await t.as(key).post(`/experiments/${missing}/variations`, { config_yaml: 'a: 1' })).status,
      404,
    );
    assert.equal((await t.as(key).get(`/experiments/${missing}/variations`)).status, 404);
  });
});
