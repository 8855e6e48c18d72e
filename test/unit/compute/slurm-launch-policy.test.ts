import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { slurmConfig } from '../../../src/compute/slurm-config.ts';
import { slurmLaunchRefusal } from '../../../src/compute/slurm-launch-policy.ts';

describe('slurmLaunchRefusal', () => {
  const config = slurmConfig({
    ASSAY_SLURM_PARTITION: 'debug',
    ASSAY_SLURM_ALLOWED_PARTITIONS: 'gpu',
    ASSAY_SLURM_ACCOUNT: 'lab',
    ASSAY_SLURM_ALLOWED_GRES: 'gpu,shard:a100',
    ASSAY_SLURM_ALLOWED_OPTIONS: '--constraint,--exclusive',
  });
  const refusal = (slurm: unknown, c = config) => slurmLaunchRefusal(c, { command: 'x', slurm });

  test('a block without a job asks for the defaults only', () => {
    assert.equal(slurmLaunchRefusal(config, { command: 'x' }), undefined);
    assert.equal(refusal(null), undefined);
    assert.equal(refusal({}), undefined);
  });

  test('accepts the defaults, the listed values, any gres count and listed options with or without a value', () => {
    for (const job of [
      { partition: 'debug', account: 'lab' },
      { partition: 'gpu', time_limit: '10', cpus: 4, memory_mb: 1000 },
      { gres: 'gpu' },
      { gres: 'gpu:8' },
      { gres: 'gpu:1,shard:a100:40' },
      { gres: 'shard:a100' },
      { extra: ['--constraint=a100,ib', '--exclusive'] },
      { extra: [] },
    ])
      assert.equal(refusal(job), undefined, JSON.stringify(job));
  });

  test('refuses each field off its list, naming the field, the value, what is allowed and the setting', () => {
    assert.deepEqual(refusal({ partition: 'bigmem' }), {
      field: 'launch.slurm.partition',
      message:
        'launch.slurm.partition "bigmem" is not allowed on this server; allowed: debug, gpu (ASSAY_SLURM_ALLOWED_PARTITIONS)',
    });
    assert.deepEqual(refusal({ account: 'other' })?.field, 'launch.slurm.account');
    assert.match(refusal({ account: 'other' })!.message, /allowed: lab \(ASSAY_SLURM_ALLOWED_ACCOUNTS\)/);
    // No QOS default and none listed: the message says the operator allows none.
    assert.deepEqual(refusal({ qos: 'high' }), {
      field: 'launch.slurm.qos',
      message:
        'launch.slurm.qos "high" is not allowed on this server (its operator allows none: ASSAY_SLURM_ALLOWED_QOS)',
    });
    // The item refused is named, count and all; a typed request needs its type listed.
    assert.match(refusal({ gres: 'gpu:2,mps:100' })!.message, /"mps:100".*ASSAY_SLURM_ALLOWED_GRES/);
    assert.equal(refusal({ gres: 'gpu:a100:2' })?.field, 'launch.slurm.gres');
    assert.equal(refusal({ gres: 'shard:2' })?.field, 'launch.slurm.gres');
    assert.match(
      refusal({ extra: ['--exclusive', '--nodelist=node7'] })!.message,
      /"--nodelist=node7".*ASSAY_SLURM_ALLOWED_OPTIONS/,
    );
    // An option named by a prefix of a listed one is another option.
    assert.equal(refusal({ extra: ['--constraintx=1'] })?.field, 'launch.slurm.extra');
  });

  test('the first field refused is the one named, in the order partition, account, qos, gres, extra', () => {
    assert.equal(
      refusal({ extra: ['--nodelist=a'], gres: 'fpga', qos: 'x', account: 'y', partition: 'z' })?.field,
      'launch.slurm.partition',
    );
    assert.equal(refusal({ extra: ['--nodelist=a'], gres: 'fpga' })?.field, 'launch.slurm.gres');
  });

  test('`*` allows any name, but an option must still be listed', () => {
    const any = slurmConfig({
      ASSAY_SLURM_ALLOWED_PARTITIONS: '*',
      ASSAY_SLURM_ALLOWED_ACCOUNTS: '*',
      ASSAY_SLURM_ALLOWED_QOS: '*',
      ASSAY_SLURM_ALLOWED_GRES: '*',
    });
    assert.equal(refusal({ partition: 'p', account: 'a', qos: 'q', gres: 'fpga:xilinx:2' }, any), undefined);
    assert.deepEqual(refusal({ extra: ['--exclusive'] }, any), {
      field: 'launch.slurm.extra',
      message:
        'launch.slurm.extra "--exclusive" is not allowed on this server (its operator allows none: ASSAY_SLURM_ALLOWED_OPTIONS)',
    });
  });

  test('a stored block of the wrong shape is refused, not read', () => {
    assert.equal(refusal('gpu')?.field, 'launch.slurm');
    assert.equal(refusal(['gpu'])?.field, 'launch.slurm');
    assert.equal(refusal({ partition: 5 })?.field, 'launch.slurm.partition');
    assert.equal(refusal({ gres: ['gpu'] })?.field, 'launch.slurm.gres');
    assert.equal(refusal({ extra: '--exclusive' })?.field, 'launch.slurm.extra');
    assert.equal(refusal({ extra: [1] })?.field, 'launch.slurm.extra');
  });
});
