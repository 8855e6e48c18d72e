// A server whose managed runs go to EC2 refuses launch blocks outside the operator's allowlists when the
// variation is made.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FakeOrchestrator } from '../support/fake-orchestrator.ts';
import { createExperiment } from '../support/fixtures.ts';
import { startTestService, type TestService } from '../support/service.ts';

const AMI = 'ami-0aaaaaaaaaaaaaaa1';

describe('EC2 launch allowlists at variation creation', () => {
  let t: TestService;
  let key: string;
  before(async () => {
    t = await startTestService({
      orchestrator: new FakeOrchestrator(),
      env: { ASSAY_COMPUTE: 'ec2', EC2_AMI: AMI, EC2_ALLOWED_INSTANCE_TYPES: 'g5.xlarge' },
    });
    key = (await t.createUser()).key;
  });
  after(() => t.close());

  const yaml = (launch: string) => `lr: 0.1\nlaunch:\n  command: python train.py\n${launch}`;

  it('refuses each machine field outside its allowlist with 422 naming the field', async () => {
    const e = await createExperiment(t, key);
    for (const [launch, field] of [
      ['  image: ami-0bbbbbbbbbbbbbbb2\n', 'launch.image'],
      ['  instance_type: p4d.24xlarge\n', 'launch.instance_type'],
      ['  subnet_id: subnet-0123456789abcdef0\n', 'launch.subnet_id'],
      ['  security_group_ids: [sg-0123456789abcdef0]\n', 'launch.security_group_ids'],
      [
        '  iam_instance_profile: arn:aws:iam::123456789012:instance-profile/admin\n',
        'launch.iam_instance_profile',
      ],
    ]) {
      const res = await t.as(key).post(`/experiments/${e.id}/variations`, { config_yaml: yaml(launch!) });
      assert.equal(res.status, 422, JSON.stringify(res.body));
      assert.equal(res.body.error.code, 'launch_not_allowed');
      assert.equal(res.body.error.details.field, field);
      assert.ok(res.body.error.message.startsWith(field!), res.body.error.message);
    }
    // A value of the wrong shape is the contract's LaunchConfig refusing it, before any allowlist is asked.
    const shape = await t
      .as(key)
      .post(`/experiments/${e.id}/variations`, { config_yaml: yaml('  image: 5\n') });
    assert.equal(shape.status, 400, JSON.stringify(shape.body));
    assert.deepEqual(
      [shape.body.error.code, shape.body.error.details.field],
      ['invalid_config', 'launch.image'],
    );
    const listed = await t.as(key).get(`/experiments/${e.id}/variations`);
    assert.deepEqual(listed.body.items, [], 'nothing was created');
  });

  it('accepts the defaults and listed values, and checks an edit as it checks a creation', async () => {
    const e = await createExperiment(t, key);
    const ok = await t.as(key).post(`/experiments/${e.id}/variations`, {
      config_yaml: yaml(`  image: ${AMI}\n  instance_type: g5.xlarge\n`),
    });
    assert.equal(ok.status, 201, JSON.stringify(ok.body));
    const edit = await t.as(key).patch(`/experiments/${e.id}/variations/${ok.body.n}`, {
      config_yaml: yaml('  instance_type: x2iedn.metal\n'),
    });
    assert.deepEqual([edit.status, edit.body.error?.details?.field], [422, 'launch.instance_type']);
  });

  it('refuses a sweep whose points leave the allowlist', async () => {
    const e = await createExperiment(t, key);
    const res = await t.as(key).post(`/experiments/${e.id}/sweeps`, {
      base_yaml: yaml(''),
      grid: { 'launch.instance_type': ['g5.xlarge', 'p5.48xlarge'] },
    });
    assert.equal(res.status, 422, JSON.stringify(res.body));
    assert.equal(res.body.error.code, 'launch_not_allowed');
  });
});

describe('EC2 security groups: an empty list is refused, not read as the VPC default group', () => {
  let t: TestService;
  let key: string;
  before(async () => {
    t = await startTestService({
      orchestrator: new FakeOrchestrator(),
      env: { ASSAY_COMPUTE: 'ec2', EC2_AMI: AMI, EC2_SECURITY_GROUP_IDS: 'sg-0aaaaaaaaaaaaaaa1' },
    });
    key = (await t.createUser()).key;
  });
  after(() => t.close());

  it('refuses `security_group_ids: []` in a variation and in a sweep, naming the field', async () => {
    const e = await createExperiment(t, key);
    const yaml = 'lr: 0.1\nlaunch:\n  command: python train.py\n  security_group_ids: []\n';
    const res = await t.as(key).post(`/experiments/${e.id}/variations`, { config_yaml: yaml });
    assert.equal(res.status, 422, JSON.stringify(res.body));
    assert.equal(res.body.error.code, 'launch_not_allowed');
    assert.equal(res.body.error.details.field, 'launch.security_group_ids');
    assert.match(res.body.error.message, /EC2_SECURITY_GROUP_IDS/);
    const sweep = await t
      .as(key)
      .post(`/experiments/${e.id}/sweeps`, { base_yaml: yaml, grid: { lr: [0.1, 0.2] } });
    assert.equal(sweep.status, 422, JSON.stringify(sweep.body));
    assert.equal(sweep.body.error.details.field, 'launch.security_group_ids');
    assert.deepEqual((await t.as(key).get(`/experiments/${e.id}/variations`)).body.items, []);
  });
});

describe('launch blocks tagged by provider on a local server', () => {
  let t: TestService;
  let key: string;
  before(async () => {
    t = await startTestService({ orchestrator: new FakeOrchestrator() });
    key = (await t.createUser()).key;
  });
  after(() => t.close());

  it('takes an untagged block and a `local` one, and refuses another provider’s block or fields', async () => {
    const e = await createExperiment(t, key);
    const create = (launch: string) =>
      t.as(key).post(`/experiments/${e.id}/variations`, { config_yaml: `lr: 0.1\nlaunch:\n${launch}` });
    // Untagged, EC2's machine fields are kept and ignored here, as before providers were named.
    const untagged = await create('  command: python train.py\n  instance_type: g5.xlarge\n');
    assert.equal(untagged.status, 201, JSON.stringify(untagged.body));
    const local = await create('  provider: local\n  command: python train.py\n');
    assert.equal(local.status, 201, JSON.stringify(local.body));
    assert.deepEqual(local.body.launch_config, { provider: 'local', command: 'python train.py' });
    for (const [launch, status, code, field] of [
      ['  provider: ec2\n  command: x\n', 422, 'launch_not_allowed', 'launch.provider'],
      ['  provider: slurm\n  command: x\n', 422, 'launch_not_allowed', 'launch.provider'],
      ['  provider: kubernetes\n  command: x\n', 400, 'invalid_config', 'launch.provider'],
      ['  provider: local\n  image: ami-0aaaaaaaaaaaaaaa1\n', 400, 'invalid_config', 'launch.image'],
    ] as const) {
      const res = await create(launch);
      assert.deepEqual(
        [res.status, res.body.error?.code, res.body.error?.details?.field],
        [status, code, field],
        JSON.stringify(res.body),
      );
    }
    const listed = await t.as(key).get(`/experiments/${e.id}/variations`);
    assert.equal(listed.body.items.length, 2);
  });
});
