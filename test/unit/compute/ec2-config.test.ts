import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ec2Config } from '../../../src/compute/ec2-config.ts';
import { ConfigError } from '../../../src/settings/config-error.ts';

describe('ec2Config', () => {
  test('defaults with nothing set', () => {
    assert.deepEqual(ec2Config({}), {
      region: 'us-east-1',
      endpoint: undefined,
      ami: undefined,
      instanceType: 't3.micro',
      subnetId: undefined,
      securityGroupIds: [],
      iamInstanceProfile: undefined,
      // Unset allowlists allow the operator's defaults only.
      allowed: {
        image: [],
        instance_type: ['t3.micro'],
        subnet_id: [],
        security_group_ids: [],
        iam_instance_profile: [],
      },
    });
  });

  test('reads every variable, trimming and splitting the group list', () => {
    const config = ec2Config({
      EC2_REGION: ' eu-west-2 ',
      EC2_ENDPOINT: 'http://127.0.0.1:5000',
      EC2_AMI: 'ami-0123456789abcdef0',
      EC2_INSTANCE_TYPE: 'g5.xlarge',
      EC2_SUBNET_ID: 'subnet-0abc1234',
      EC2_SECURITY_GROUP_IDS: 'sg-0abc1234, sg-0def5678',
      EC2_IAM_INSTANCE_PROFILE: 'arn:aws:iam::123456789012:instance-profile/assay-runner',
    });
    assert.equal(config.region, 'eu-west-2');
    assert.equal(config.endpoint, 'http://127.0.0.1:5000');
    assert.equal(config.ami, 'ami-0123456789abcdef0');
    assert.equal(config.instanceType, 'g5.xlarge');
    assert.equal(config.subnetId, 'subnet-0abc1234');
    assert.deepEqual(config.securityGroupIds, ['sg-0abc1234', 'sg-0def5678']);
    assert.equal(config.iamInstanceProfile, 'arn:aws:iam::123456789012:instance-profile/assay-runner');
    assert.ok(Object.isFrozen(config) && Object.isFrozen(config.securityGroupIds));
  });

  test('accepts a profile given by name', () => {
    assert.equal(ec2Config({ EC2_IAM_INSTANCE_PROFILE: 'assay-runner' }).iamInstanceProfile, 'assay-runner');
  });

  const bad: Record<string, string> = {
    EC2_REGION: 'mars',
    EC2_ENDPOINT: 'ftp://example.com',
    EC2_AMI: 'image-1',
    EC2_INSTANCE_TYPE: 'big',
    EC2_SUBNET_ID: 'sg-0abc1234',
    EC2_SECURITY_GROUP_IDS: 'sg-0abc1234,,sg-0def5678',
    EC2_IAM_INSTANCE_PROFILE: 'has space',
  };
  for (const [name, value] of Object.entries(bad)) {
    test(`rejects a bad ${name}, naming it`, () => {
      assert.throws(
        () => ec2Config({ [name]: value }),
        (error: unknown) => {
          assert.ok(error instanceof ConfigError);
          assert.match(error.message, new RegExp(name));
          return true;
        },
      );
    });
  }
});
