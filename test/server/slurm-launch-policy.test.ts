// A server whose managed runs go to Slurm refuses a `slurm:` job off the operator's allowlists wherever a
// config is made: variation create and edit, a sweep's points, a search sweep's trials. It needs no Slurm
// installed: it only checks blocks (the worker submits).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { generateOrchestratorKey } from '../../src/server/orchestration/orchestrator-keys.ts';
import { FakeOrchestrator } from '../support/fake-orchestrator.ts';
import { createExperiment } from '../support/fixtures.ts';
import { startTestService, type TestService } from '../support/service.ts';

const ENV = {
  ASSAY_COMPUTE: 'slurm',
  ASSAY_SLURM_PARTITION: 'debug',
  ASSAY_SLURM_ALLOWED_PARTITIONS: 'gpu',
  ASSAY_SLURM_ACCOUNT: 'lab',
  ASSAY_SLURM_QOS: 'normal',
  ASSAY_SLURM_ALLOWED_QOS: 'high',
  ASSAY_SLURM_ALLOWED_GRES: 'gpu,shard:a100',
  ASSAY_SLURM_ALLOWED_OPTIONS: '--constraint,--exclusive',
};

const yaml = (job: string) =>
  `lr: 0.1\nlaunch:\n  provider: slurm\n  command: python train.py\n${job ? `  slurm:\n${job}` : ''}`;

describe('Slurm launch allowlists', () => {
  let t: TestService;
  let key: string;
  const orchestratorKey = generateOrchestratorKey();
  before(async () => {
    t = await startTestService({
      orchestrator: new FakeOrchestrator(),
      env: { ...ENV, ASSAY_ORCHESTRATOR_KEY: orchestratorKey },
    });
    key = (await t.createUser()).key;
  });
  after(() => t?.close());

  it('refuses each job field off its allowlist with 422 naming the field and its setting, creating nothing', async () => {
    const e = await createExperiment(t, key);
    for (const [job, field, setting] of [
      ['    partition: bigmem\n', 'launch.slurm.partition', 'ASSAY_SLURM_ALLOWED_PARTITIONS'],
      ['    account: other-lab\n', 'launch.slurm.account', 'ASSAY_SLURM_ALLOWED_ACCOUNTS'],
      ['    qos: urgent\n', 'launch.slurm.qos', 'ASSAY_SLURM_ALLOWED_QOS'],
      ['    gres: gpu:2,mps:100\n', 'launch.slurm.gres', 'ASSAY_SLURM_ALLOWED_GRES'],
      // Listed `shard:a100` is a type of shard; `shard` alone (any type) is not listed.
      ['    gres: shard:3\n', 'launch.slurm.gres', 'ASSAY_SLURM_ALLOWED_GRES'],
      [
        '    extra: [--constraint=a100, --nodelist=node7]\n',
        'launch.slurm.extra',
        'ASSAY_SLURM_ALLOWED_OPTIONS',
      ],
    ] as const) {
      const res = await t.as(key).post(`/experiments/${e.id}/variations`, { config_yaml: yaml(job) });
      assert.equal(res.status, 422, `${job}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.error.code, 'launch_not_allowed');
      assert.equal(res.body.error.details.field, field);
      assert.ok(res.body.error.message.startsWith(field), res.body.error.message);
      assert.match(res.body.error.message, new RegExp(setting));
    }
    // An untagged block's `slurm:` job is the server's provider's, and checked the same.
    const untagged = await t.as(key).post(`/experiments/${e.id}/variations`, {
      config_yaml: 'lr: 0.1\nlaunch:\n  command: x\n  slurm:\n    partition: bigmem\n',
    });
    assert.deepEqual([untagged.status, untagged.body.error?.details?.field], [422, 'launch.slurm.partition']);
    // A value of the wrong shape is the contract refusing it (400), before any allowlist is asked.
    const shape = await t
      .as(key)
      .post(`/experiments/${e.id}/variations`, { config_yaml: yaml('    partition: "a b"\n') });
    assert.deepEqual(
      [shape.status, shape.body.error.code, shape.body.error.details.field],
      [400, 'invalid_config', 'launch.slurm.partition'],
    );
    assert.deepEqual((await t.as(key).get(`/experiments/${e.id}/variations`)).body.items, []);
  });

  it('accepts the defaults, the listed values and any gres count, and checks an edit as a creation', async () => {
    const e = await createExperiment(t, key);
    for (const job of [
      '',
      '    partition: debug\n    account: lab\n    qos: normal\n',
      '    partition: gpu\n    qos: high\n    time_limit: "2:00:00"\n    cpus: 8\n    memory_mb: 32000\n',
      '    gres: gpu:4\n',
      '    gres: gpu,shard:a100:12\n',
      '    extra: [--constraint=a100, --exclusive]\n',
    ]) {
      const ok = await t.as(key).post(`/experiments/${e.id}/variations`, { config_yaml: yaml(job) });
      assert.equal(ok.status, 201, `${job}: ${JSON.stringify(ok.body)}`);
    }
    const edit = await t.as(key).patch(`/experiments/${e.id}/variations/1`, {
      config_yaml: yaml('    account: other-lab\n'),
    });
    assert.deepEqual([edit.status, edit.body.error?.details?.field], [422, 'launch.slurm.account']);
    const kept = await t.as(key).get(`/experiments/${e.id}/variations/1`);
    assert.equal(kept.body.launch_config.slurm, undefined, 'the refused edit changed nothing');
    const allowedEdit = await t.as(key).patch(`/experiments/${e.id}/variations/1`, {
      config_yaml: yaml('    partition: gpu\n'),
    });
    assert.equal(allowedEdit.status, 200, JSON.stringify(allowedEdit.body));
  });

  it('refuses a sweep whose points leave the allowlist, naming the point and the field', async () => {
    const e = await createExperiment(t, key);
    const res = await t.as(key).post(`/experiments/${e.id}/sweeps`, {
      base_yaml: yaml('    partition: gpu\n'),
      grid: { 'launch.slurm.partition': ['gpu', 'debug', 'bigmem'] },
    });
    assert.equal(res.status, 422, JSON.stringify(res.body));
    assert.equal(res.body.error.code, 'launch_not_allowed');
    assert.deepEqual(res.body.error.details, { field: 'launch.slurm.partition', point: 3 });
    assert.deepEqual((await t.as(key).get(`/experiments/${e.id}/variations`)).body.items, []);
    const ok = await t.as(key).post(`/experiments/${e.id}/sweeps`, {
      base_yaml: yaml('    partition: gpu\n'),
      grid: { 'launch.slurm.gres': ['gpu:1', 'gpu:2'] },
    });
    assert.equal(ok.status, 202, JSON.stringify(ok.body));
  });

  it('refuses a search sweep whose choice over a launch field leaves the allowlist, creating nothing', async () => {
    const e = await createExperiment(t, key);
    const res = await t.as(key).post(`/experiments/${e.id}/sweeps`, {
      base_yaml: yaml('    partition: gpu\n'),
      strategy: 'random',
      space: {
        lr: { distribution: 'uniform', low: 0.01, high: 1 },
        'launch.slurm.partition': { distribution: 'choice', values: ['gpu', 'bigmem'] },
      },
      trials: 2,
    });
    assert.equal(res.status, 422, JSON.stringify(res.body));
    assert.equal(res.body.error.code, 'launch_not_allowed');
    assert.deepEqual(res.body.error.details, {
      field: 'launch.slurm.partition',
      space: 'launch.slurm.partition',
    });
    assert.match(res.body.error.message, /^space\.launch\.slurm\.partition value "bigmem": /);
    const experiment = await t.as(key).get(`/experiments/${e.id}`);
    assert.equal(experiment.body.state, 'draft', 'no sweep froze the experiment');
  });

  it('checks each search trial as it is made: one off the allowlist is refused, one inside is made', async () => {
    const e = await createExperiment(t, key);
    const sweep = await t.as(key).post(`/experiments/${e.id}/sweeps`, {
      base_yaml: yaml('    partition: gpu\n'),
      strategy: 'random',
      space: { 'launch.slurm.partition': { distribution: 'choice', values: ['gpu', 'debug'] } },
      trials: 2,
    });
    assert.equal(sweep.status, 202, JSON.stringify(sweep.body));
    const trial = (n: number, partition: string) =>
      t.as(orchestratorKey).post(`/orchestrator/sweeps/${sweep.body.id}/trials`, {
        trial: n,
        params: { 'launch.slurm.partition': partition },
      });
    // A suggestion outside the declared choice (a sampler's bug) still meets the allowlist.
    const refused = await trial(1, 'bigmem');
    assert.deepEqual(
      [refused.status, refused.body.error?.code, refused.body.error?.details?.field],
      [422, 'launch_not_allowed', 'launch.slurm.partition'],
    );
    const made = await trial(1, 'debug');
    assert.equal(made.status, 200, JSON.stringify(made.body));
    const variation = await t.as(key).get(`/experiments/${e.id}/variations/${made.body.n}`);
    assert.equal(variation.body.launch_config.slurm.partition, 'debug');
  });
});

describe('Slurm allowlists of `*`', () => {
  let t: TestService;
  let key: string;
  before(async () => {
    t = await startTestService({
      orchestrator: new FakeOrchestrator(),
      env: {
        ASSAY_COMPUTE: 'slurm',
        ASSAY_SLURM_ALLOWED_PARTITIONS: '*',
        ASSAY_SLURM_ALLOWED_ACCOUNTS: '*',
        ASSAY_SLURM_ALLOWED_QOS: '*',
        ASSAY_SLURM_ALLOWED_GRES: '*',
      },
    });
    key = (await t.createUser()).key;
  });
  after(() => t?.close());

  it('allows any partition, account, QOS and gres, but still no sbatch option not listed', async () => {
    const e = await createExperiment(t, key);
    const any = await t.as(key).post(`/experiments/${e.id}/variations`, {
      config_yaml: yaml(
        '    partition: anything\n    account: anyone\n    qos: whatever\n    gres: fpga:xilinx:3\n',
      ),
    });
    assert.equal(any.status, 201, JSON.stringify(any.body));
    const option = await t.as(key).post(`/experiments/${e.id}/variations`, {
      config_yaml: yaml('    extra: [--exclusive]\n'),
    });
    assert.deepEqual([option.status, option.body.error?.details?.field], [422, 'launch.slurm.extra']);
    assert.match(option.body.error.message, /allows none: ASSAY_SLURM_ALLOWED_OPTIONS/);
  });
});

describe('Slurm allowlist settings the service refuses at start', () => {
  it('refuses ASSAY_SLURM_ALLOWED_OPTIONS=* and names the setting', async () => {
    await assert.rejects(
      startTestService({
        orchestrator: new FakeOrchestrator(),
        env: { ASSAY_COMPUTE: 'slurm', ASSAY_SLURM_ALLOWED_OPTIONS: '*' },
      }),
      /ASSAY_SLURM_ALLOWED_OPTIONS/,
    );
  });
});
