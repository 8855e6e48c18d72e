// The EC2 provider against a real moto_server EC2 endpoint: tags, user data, idempotency, and nothing left
// running; and the provisioning activity on it: the user data holds a one-time exchange token, never a
// worker key.
import assert from 'node:assert/strict';
import {
  DescribeImagesCommand,
  DescribeInstanceAttributeCommand,
  DescribeInstancesCommand,
  EC2Client,
  TerminateInstancesCommand,
  type Instance,
} from '@aws-sdk/client-ec2';
import { after, before, describe, test } from 'node:test';
import { MockActivityEnvironment } from '@temporalio/testing';
import { stringify } from 'yaml';
import { createActivities } from '../../activities/index.ts';
import { OrchestratorApi } from '../../activities/orchestrator-api.ts';
import { ProvisionRefusedError, type ProvisionRequest } from '../../src/compute/compute-provider.ts';
import { ec2Config } from '../../src/compute/ec2-config.ts';
import { Ec2Provider } from '../../src/compute/ec2-provider.ts';
import { mintEmbeddedOrchestratorKey } from '../../src/server/orchestration/orchestrator-keys.ts';
import { startEc2Proxy } from '../support/ec2-proxy.ts';
import { FakeOrchestrator } from '../support/fake-orchestrator.ts';
import { startMoto, type Moto } from '../support/moto.ts';
import { startTestService } from '../support/service.ts';
import { exchange } from '../support/worker-key-exchange.ts';

const credentials = { accessKeyId: 'testing', secretAccessKey: 'testing' };
const region = 'us-east-1';

function request(key: string): ProvisionRequest {
  return {
    idempotencyKey: key,
    env: {
      SERVICE_SERVER_URL: 'https://assay.example',
      SERVICE_EXCHANGE_TOKEN: 'sk-secret',
      SERVICE_EXPERIMENT_ID: 'exp-1',
      SERVICE_VARIATION: '2',
      SERVICE_RUN: '3',
    },
    launch: {
      command: ['python', 'train.py', "--name=it's"],
      instance_type: 't3.small',
      env: { EXTRA: 'a b' },
    },
    tags: { team: 'vision' },
    provisionedByAdmin: false,
    launchAuthor: null,
  };
}

describe('EC2 compute provider against moto', () => {
  let moto: Moto;
  let ec2: EC2Client;
  let provider: Ec2Provider;
  let ami: string;

  before(async () => {
    moto = await startMoto();
    ec2 = new EC2Client({ region, endpoint: moto.endpoint, credentials });
    const images = await ec2.send(new DescribeImagesCommand({ Owners: ['amazon'] }));
    const found = images.Images?.find((i) => /^ami-[0-9a-f]{8,17}$/.test(i.ImageId ?? ''))?.ImageId;
    assert.ok(found, 'moto offers a default AMI');
    ami = found;
    provider = new Ec2Provider({
      config: ec2Config({
        EC2_REGION: region,
        EC2_ENDPOINT: moto.endpoint,
        EC2_AMI: ami,
        EC2_ALLOWED_INSTANCE_TYPES: 't3.small,g5.xlarge',
      }),
      credentials,
    });
  });

  after(async () => {
    try {
      if (ec2) {
        const live = await instances([{ Name: 'instance-state-name', Values: ['pending', 'running'] }]);
        assert.deepEqual(
          live.map((i) => i.InstanceId),
          [],
          'no instance left running after the tests',
        );
      }
    } finally {
      provider?.close();
      ec2?.destroy();
      await moto?.stop();
    }
  });

  async function instances(filters: { Name: string; Values: string[] }[]): Promise<Instance[]> {
    const page = await ec2.send(new DescribeInstancesCommand({ Filters: filters }));
    return (page.Reservations ?? []).flatMap((r) => r.Instances ?? []);
  }

  async function byId(id: string): Promise<Instance> {
    const page = await ec2.send(new DescribeInstancesCommand({ InstanceIds: [id] }));
    return page.Reservations![0]!.Instances![0]!;
  }

  test('provisions one instance with the run tags and the runner in its user data', async () => {
    const key = 'run-exp-1-2-3';
    const instance = await provider.provision(request(key));
    assert.equal(instance.provider, 'ec2');
    assert.match(instance.state, /^(pending|running)$/);

    const described = await byId(instance.instanceId);
    assert.equal(described.InstanceType, 't3.small');
    // IMDSv2 only, and a token that cannot cross a second hop (a container or a proxy on the instance).
    assert.deepEqual(
      [
        described.MetadataOptions?.HttpTokens,
        described.MetadataOptions?.HttpPutResponseHopLimit,
        described.MetadataOptions?.HttpEndpoint,
      ],
      ['required', 1, 'enabled'],
    );
    const tags = Object.fromEntries((described.Tags ?? []).map((t) => [t.Key, t.Value]));
    assert.deepEqual(tags, {
      team: 'vision',
      Name: 'assay exp-1 v2 r3',
      'assay:experiment': 'exp-1',
      'assay:variation': '2',
      'assay:run': '3',
      'assay:workflow': key,
    });

    const attribute = await ec2.send(
      new DescribeInstanceAttributeCommand({ InstanceId: instance.instanceId, Attribute: 'userData' }),
    );
    const script = Buffer.from(attribute.UserData!.Value!, 'base64').toString('utf8');
    assert.match(script, /^#!\/bin\/bash\n/);
    for (const line of [
      "export SERVICE_SERVER_URL='https://assay.example'",
      "export SERVICE_EXCHANGE_TOKEN='sk-secret'",
      "export SERVICE_EXPERIMENT_ID='exp-1'",
      "export SERVICE_VARIATION='2'",
      "export SERVICE_RUN='3'",
      "export EXTRA='a b'",
      `exec 'assay' 'run' '--' 'python' 'train.py' '--name=it'\\''s'`,
    ]) {
      assert.ok(script.split('\n').includes(line), `user data has: ${line}\n---\n${script}`);
    }

    const now = await provider.describe(key);
    assert.equal(now?.instanceId, instance.instanceId);
    assert.match(now.state, /^(pending|running)$/);
    await provider.terminate(key);
    assert.equal((await byId(instance.instanceId)).State?.Name, 'terminated');
    assert.equal(await provider.describe(key), undefined);
  });

  test('provisioning twice with the same key yields the same instance', async () => {
    const key = 'run-exp-1-2-4';
    const first = await provider.provision(request(key));
    const again = await provider.provision(request(key));
    assert.equal(again.instanceId, first.instanceId);
    const live = await instances([
      { Name: 'tag:assay:workflow', Values: [key] },
      { Name: 'instance-state-name', Values: ['pending', 'running', 'stopping', 'stopped'] },
    ]);
    assert.deepEqual(
      live.map((i) => i.InstanceId),
      [first.instanceId],
    );

    await provider.terminate(key);
    await provider.terminate(key);
    // After the end, the same key still names the same (terminated) instance: the run never starts twice.
    assert.deepEqual(await provider.provision(request(key)), {
      provider: 'ec2',
      instanceId: first.instanceId,
      state: 'terminated',
    });
  });

  test('a key longer than a ClientToken allows still works and stays idempotent', async () => {
    const key = `run-${'e'.repeat(36)}-12-345-${'x'.repeat(40)}`;
    const first = await provider.provision(request(key));
    assert.equal((await provider.provision(request(key))).instanceId, first.instanceId);
    await provider.terminate(key);
    assert.equal((await byId(first.instanceId)).State?.Name, 'terminated');
  });

  test('unknown keys: nothing to describe, terminate succeeds', async () => {
    assert.equal(await provider.describe('run-never-provisioned'), undefined);
    await provider.terminate('run-never-provisioned');
  });

  test("machine fields outside the operator's allowlists are refused and start nothing", async () => {
    const cases: [Partial<ProvisionRequest['launch']>, RegExp][] = [
      [
        { image: 'ami-0123456789abcdef0' },
        /launch\.image "ami-0123456789abcdef0" is not allowed.*EC2_ALLOWED_IMAGES/,
      ],
      [{ instance_type: 'p4d.24xlarge' }, /launch\.instance_type "p4d\.24xlarge" is not allowed/],
      [{ subnet_id: 'subnet-0123456789abcdef0' }, /launch\.subnet_id may not be set.*EC2_ALLOWED_SUBNET_IDS/],
      [{ security_group_ids: ['sg-0123456789abcdef0'] }, /launch\.security_group_ids may not be set/],
      [{ iam_instance_profile: 'admin-role' }, /launch\.iam_instance_profile may not be set/],
    ];
    for (const [i, [fields, message]] of cases.entries()) {
      const req = request(`run-exp-1-2-${100 + i}`);
      req.launch = { ...req.launch, ...fields };
      await assert.rejects(provider.provision(req), (error: Error) => {
        assert.ok(error instanceof ProvisionRefusedError, String(error));
        assert.match(error.message, message);
        return true;
      });
      assert.deepEqual(await instances([{ Name: 'tag:assay:workflow', Values: [req.idempotencyKey] }]), []);
    }
    // The operator's own default, and a listed value, pass.
    const req = request('run-exp-1-2-110');
    req.launch = { ...req.launch, image: ami, instance_type: 'g5.xlarge' };
    const instance = await provider.provision(req);
    assert.equal((await byId(instance.instanceId)).InstanceType, 'g5.xlarge');
    await provider.terminate(req.idempotencyKey);
  });
  test('spot: a one-time spot instance; taken back by EC2 it is preempted, terminated by us it is gone; a hanging API throws', async () => {
    // moto cannot interrupt a spot instance: the proxy reports the interruption as EC2 would.
    const proxy = await startEc2Proxy(moto.endpoint);
    const spotProvider = new Ec2Provider({
      config: ec2Config({ EC2_REGION: region, EC2_ENDPOINT: proxy.url, EC2_AMI: ami }),
      credentials,
      requestTimeoutMs: 500,
    });
    try {
      const spot = request('run-exp-1-2-200');
      spot.launch = { ...spot.launch, instance_type: undefined, spot: true };
      const taken = await spotProvider.provision(spot);
      assert.equal((await byId(taken.instanceId)).InstanceLifecycle, 'spot');
      assert.match((await spotProvider.describe(spot.idempotencyKey))!.state, /^(pending|running)$/);
      await ec2.send(new TerminateInstancesCommand({ InstanceIds: [taken.instanceId] }));
      proxy.interrupt(taken.instanceId);
      assert.deepEqual(await spotProvider.describe(spot.idempotencyKey), {
        provider: 'ec2',
        instanceId: taken.instanceId,
        state: 'preempted',
      });

      // A spot instance we terminate ourselves (the run's end) is no preemption: it is gone.
      const ended = request('run-exp-1-2-201');
      ended.launch = { ...ended.launch, instance_type: undefined, spot: true };
      await spotProvider.provision(ended);
      await spotProvider.terminate(ended.idempotencyKey);
      assert.equal(await spotProvider.describe(ended.idempotencyKey), undefined);

      // No answer at all: describe throws once the SDK's attempts have timed out, rather than hanging.
      const started = Date.now();
      const fault = proxy.faultDescribes(3, 'hang');
      await assert.rejects(spotProvider.describe(spot.idempotencyKey), /requestTimeout|timed? ?out/i);
      await fault;
      assert.ok(Date.now() - started < 10_000, `gave up after ${Date.now() - started} ms`);
      await assert.rejects(
        Promise.all([proxy.faultDescribes(3, '503'), spotProvider.describe(spot.idempotencyKey)]),
      );
    } finally {
      spotProvider.close();
      await proxy.close();
    }
  });

  test('the provisioning activity puts a one-time exchange token in the user data, never a worker key', async () => {
    const t = await startTestService({ listen: true, orchestrator: new FakeOrchestrator() });
    try {
      const api = t.as(t.adminKey);
      const experiment = await api.post('/experiments', { name: 'ec2', organization_id: 'personal' });
      const id = experiment.body.id as string;
      const config_yaml = stringify({ launch: { command: 'python train.py', instance_type: 't3.small' } });
      assert.equal((await api.post(`/experiments/${id}/variations`, { config_yaml })).status, 201);
      assert.equal((await api.post(`/experiments/${id}/commit`)).status, 200);
      const run = await api.post(`/experiments/${id}/variations/1/runs`);
      const runPath = `/experiments/${id}/variations/1/runs/${run.body.r}`;
      const provisioned = await api.post(`${runPath}/provision`);
      assert.equal(provisioned.status, 202, JSON.stringify(provisioned.body));
      const ref = {
        runId: run.body.id as string,
        workflowId: provisioned.body.workflow_id as string,
        experimentId: id,
        n: 1,
        r: run.body.r as number,
      };
      const orchestratorKey = (await mintEmbeddedOrchestratorKey(t.service.db)).token;
      const activities = createActivities({
        api: new OrchestratorApi({ serverUrl: t.url!, apiKey: orchestratorKey, timeout: 30 }),
        provider,
        runnerServerUrl: t.url!,
      });
      const { instanceId } = (await new MockActivityEnvironment().run(activities.provisionInstance, ref)) as {
        instanceId: string | null;
      };
      assert.ok(instanceId, 'an instance');
      const instance = { instanceId };

      const attribute = await ec2.send(
        new DescribeInstanceAttributeCommand({ InstanceId: instance.instanceId, Attribute: 'userData' }),
      );
      const script = Buffer.from(attribute.UserData!.Value!, 'base64').toString('utf8');
      assert.doesNotMatch(script, /sk_worker_/, 'no worker key in the user data');
      assert.doesNotMatch(script, /SERVICE_API_KEY/);
      const token = /^export SERVICE_EXCHANGE_TOKEN='(sk_exchange_[0-9a-f]{32}[A-Za-z0-9_-]{43})'$/m.exec(
        script,
      )?.[1];
      assert.ok(token, `the user data carries an exchange token\n---\n${script}`);
      const tags = JSON.stringify((await byId(instance.instanceId)).Tags);
      assert.ok(!tags.includes(token), 'nor do the tags');

      // What the runner does at start, then what anyone who reads the user data later could try.
      const traded = await exchange(t, token);
      assert.equal(traded.status, 201, JSON.stringify(traded.body));
      assert.equal((await t.as(traded.body.key).get(`${runPath}/config`)).status, 200);
      assert.equal((await exchange(t, token)).status, 401, 'the token in the user data is spent');
      await provider.terminate(ref.workflowId);
    } finally {
      await t.close();
    }
  });
});
