import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ProvisionRefusedError } from '../../../src/compute/compute-provider.ts';
import { ec2Config } from '../../../src/compute/ec2-config.ts';
import { Ec2Provider } from '../../../src/compute/ec2-provider.ts';

describe('the EC2 provider’s launch check', () => {
  const provider = new Ec2Provider({
    config: ec2Config({ EC2_AMI: 'ami-0aaaaaaaaaaaaaaa1', EC2_ALLOWED_SECURITY_GROUP_IDS: '*' }),
  });

  test('refuses an empty security_group_ids (stored before it was refused), even when any group is allowed', () => {
    assert.throws(
      () => provider.checkLaunch({ command: 'true', security_group_ids: [] }),
      (error: Error) =>
        error instanceof ProvisionRefusedError && /launch\.security_group_ids/.test(error.message),
    );
    provider.checkLaunch({ command: 'true', security_group_ids: ['sg-0bbbbbbbbbbbbbbb2'] });
  });
});
