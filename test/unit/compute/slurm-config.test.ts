import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { slurmConfig } from '../../../src/compute/slurm-config.ts';
import { ConfigError } from '../../../src/settings/config-error.ts';

describe('slurmConfig', () => {
  test('defaults with nothing set: the local sbatch, `assay` on the nodes, nothing a block may choose', () => {
    assert.deepEqual(slurmConfig({}), {
      submission: { kind: 'local' },
      runner: ['assay'],
      workDir: '/tmp/assay-runs',
      partition: undefined,
      account: undefined,
      qos: undefined,
      timeLimit: undefined,
      allowed: { partition: [], account: [], qos: [], gres: [], options: [] },
    });
  });

  test('reads every variable; an unset allowlist allows the operator’s default, a listed one adds to it', () => {
    const config = slurmConfig({
      ASSAY_SLURM_SSH: 'assay@login.cluster.example:2222',
      ASSAY_SLURM_SSH_KEY: '/etc/assay/slurm_ed25519',
      ASSAY_SLURM_KNOWN_HOSTS: '/etc/assay/known_hosts',
      ASSAY_SLURM_RUNNER: ' node  /opt/assay/bin/assay.js ',
      ASSAY_SLURM_WORKDIR: '/scratch/assay',
      ASSAY_SLURM_PARTITION: 'debug',
      ASSAY_SLURM_ACCOUNT: 'lab',
      ASSAY_SLURM_QOS: 'normal',
      ASSAY_SLURM_TIME_LIMIT: '1-00:00:00',
      ASSAY_SLURM_ALLOWED_PARTITIONS: 'gpu, bigmem',
      ASSAY_SLURM_ALLOWED_GRES: 'gpu,gpu:a100',
      ASSAY_SLURM_ALLOWED_OPTIONS: '--constraint, --exclusive',
    });
    assert.deepEqual(config.submission, {
      kind: 'ssh',
      target: 'assay@login.cluster.example',
      port: 2222,
      keyFile: '/etc/assay/slurm_ed25519',
      knownHostsFile: '/etc/assay/known_hosts',
    });
    assert.deepEqual(config.runner, ['node', '/opt/assay/bin/assay.js']);
    assert.equal(config.workDir, '/scratch/assay');
    assert.deepEqual(
      [config.partition, config.account, config.qos, config.timeLimit],
      ['debug', 'lab', 'normal', '1-00:00:00'],
    );
    assert.deepEqual(config.allowed, {
      partition: ['debug', 'gpu', 'bigmem'],
      account: ['lab'],
      qos: ['normal'],
      gres: ['gpu', 'gpu:a100'],
      options: ['--constraint', '--exclusive'],
    });
    assert.ok(Object.isFrozen(config) && Object.isFrozen(config.allowed) && Object.isFrozen(config.runner));
  });

  test('an SSH target without a port leaves it to ssh (22 or its config)', () => {
    const config = slurmConfig({
      ASSAY_SLURM_SSH: 'assay@login',
      ASSAY_SLURM_SSH_KEY: '/k',
      ASSAY_SLURM_KNOWN_HOSTS: '/h',
    });
    assert.deepEqual(config.submission, {
      kind: 'ssh',
      target: 'assay@login',
      port: undefined,
      keyFile: '/k',
      knownHostsFile: '/h',
    });
  });

  test('`*` allows any partition, account, QOS and gres', () => {
    const star = '*';
    const { allowed } = slurmConfig({
      ASSAY_SLURM_ALLOWED_PARTITIONS: star,
      ASSAY_SLURM_ALLOWED_ACCOUNTS: star,
      ASSAY_SLURM_ALLOWED_QOS: star,
      ASSAY_SLURM_ALLOWED_GRES: star,
    });
    assert.deepEqual(allowed, { partition: 'any', account: 'any', qos: 'any', gres: 'any', options: [] });
  });

  const bad: [Record<string, string>, RegExp][] = [
    [{ ASSAY_SLURM_ALLOWED_OPTIONS: '*' }, /ASSAY_SLURM_ALLOWED_OPTIONS.*`\*` is not allowed/],
    [{ ASSAY_SLURM_ALLOWED_OPTIONS: '--constraint,*' }, /ASSAY_SLURM_ALLOWED_OPTIONS/],
    [{ ASSAY_SLURM_ALLOWED_OPTIONS: 'constraint' }, /ASSAY_SLURM_ALLOWED_OPTIONS.*--constraint/],
    [{ ASSAY_SLURM_ALLOWED_OPTIONS: '--constraint=a100' }, /ASSAY_SLURM_ALLOWED_OPTIONS/],
    [{ ASSAY_SLURM_ALLOWED_PARTITIONS: 'gpu,,debug' }, /ASSAY_SLURM_ALLOWED_PARTITIONS/],
    [{ ASSAY_SLURM_WORKDIR: 'runs' }, /ASSAY_SLURM_WORKDIR/],
    [{ ASSAY_SLURM_PARTITION: 'a b' }, /ASSAY_SLURM_PARTITION/],
    [{ ASSAY_SLURM_TIME_LIMIT: 'forever' }, /ASSAY_SLURM_TIME_LIMIT/],
    [{ ASSAY_SLURM_SSH: 'login.cluster' }, /ASSAY_SLURM_SSH/],
    [{ ASSAY_SLURM_SSH: '-oProxyCommand=x@login' }, /ASSAY_SLURM_SSH/],
    [{ ASSAY_SLURM_SSH: 'assay@login' }, /ASSAY_SLURM_SSH_KEY and ASSAY_SLURM_KNOWN_HOSTS/],
    [
      { ASSAY_SLURM_SSH: 'assay@login', ASSAY_SLURM_SSH_KEY: '/k' },
      /ASSAY_SLURM_SSH_KEY and ASSAY_SLURM_KNOWN_HOSTS/,
    ],
    [
      {
        ASSAY_SLURM_SSH: 'assay@login:70000',
        ASSAY_SLURM_SSH_KEY: '/k',
        ASSAY_SLURM_KNOWN_HOSTS: '/h',
      },
      /ASSAY_SLURM_SSH.*port/,
    ],
  ];
  for (const [env, message] of bad) {
    test(`refuses ${JSON.stringify(env)}, naming the setting`, () => {
      assert.throws(
        () => slurmConfig(env),
        (error: unknown) => {
          assert.ok(error instanceof ConfigError, String(error));
          assert.match(error.message, message);
          return true;
        },
      );
    });
  }
});
