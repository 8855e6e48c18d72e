import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, test } from 'node:test';
import { ProvisionRefusedError } from '../../../src/compute/compute-provider.ts';
import type { SlurmConfig } from '../../../src/compute/slurm-config.ts';
import { buildSlurmSubmit, slurmJobName } from '../../../src/compute/slurm-job-script.ts';

const nasty = `it's "quoted" $HOME \`id\` \\ ; & | > * ? \n newline ü`;

const config: SlurmConfig = {
  submission: { kind: 'local' },
  runner: ['/usr/bin/node', '/opt/assay/bin/assay.js'],
  workDir: '/shared/assay',
  partition: 'debug',
  account: undefined,
  qos: undefined,
  timeLimit: '60',
  allowed: { partition: ['debug'], account: [undefined], qos: [undefined], gres: [], options: [] },
} as unknown as SlurmConfig;

describe('the Slurm job', () => {
  test('its name carries a tame workflow id, and hashes any other', () => {
    assert.equal(slurmJobName('run-abc-1-2'), 'assay-run-abc-1-2');
    assert.match(slurmJobName('run with spaces; rm -rf /'), /^assay-[0-9a-f]{64}$/);
    assert.match(slurmJobName('x'.repeat(200)), /^assay-[0-9a-f]{64}$/);
  });

  test('sbatch gets the operator defaults, the block overriding them, and the options Assay owns last', () => {
    const plain = buildSlurmSubmit({ config, name: 'assay-w', job: undefined, env: {}, command: 'true' });
    assert.deepEqual(plain.argv, [
      'sbatch',
      '--parsable',
      '--partition=debug',
      '--time=60',
      '--job-name=assay-w',
      '--export=NONE',
      '--chdir=/shared/assay',
      '--output=/shared/assay/assay-w.out',
      '--error=/shared/assay/assay-w.out',
    ]);
    const block = buildSlurmSubmit({
      config,
      name: 'assay-w',
      job: {
        partition: 'gpu',
        account: 'lab',
        qos: 'high',
        time_limit: '1',
        gres: 'gpu:2',
        cpus: 4,
        memory_mb: 2048,
        extra: ['--constraint=a100'],
      },
      env: {},
      command: 'true',
    });
    assert.deepEqual(block.argv.slice(0, 11), [
      'sbatch',
      '--parsable',
      '--constraint=a100',
      '--partition=gpu',
      '--account=lab',
      '--qos=high',
      '--time=1',
      '--gres=gpu:2',
      '--cpus-per-task=4',
      '--mem=2048M',
      '--job-name=assay-w',
    ]);
  });

  test('an extra option that would move the job’s output, environment or identity is refused', () => {
    for (const option of ['--export=ALL', '--output=/tmp/x', '--job-name=other', '--requeue', '--uid=0']) {
      assert.throws(
        () =>
          buildSlurmSubmit({ config, name: 'assay-w', job: { extra: [option] }, env: {}, command: 'true' }),
        ProvisionRefusedError,
        option,
      );
    }
  });

  test('the script exports the variables, works in the run’s dir and execs the runner, word for word', () => {
    const { script, argv } = buildSlurmSubmit({
      config,
      name: 'assay-w',
      job: undefined,
      env: { SERVICE_EXCHANGE_TOKEN: 'tok-123', WEIRD: nasty },
      command: ['python', 'train.py', nasty],
    });
    assert.match(script, /^#!\/bin\/bash\n/);
    assert.match(script, /^umask 077$/m);
    assert.match(script, /^cd '\/shared\/assay\/assay-w'$/m);
    // The token is in the script (sbatch's stdin) only, never in sbatch's argv.
    assert.ok(!argv.join(' ').includes('tok-123'));
    const body = script
      .split('\n')
      .filter((line) => !line.startsWith('mkdir') && !line.startsWith('cd '))
      .join('\n')
      .replace(/^exec /m, 'printf "%s\\0" ');
    const out = execFileSync('bash', ['-c', `${body}\nprintf '%s\\0' "$SERVICE_EXCHANGE_TOKEN" "$WEIRD"`], {
      env: {},
      encoding: 'utf8',
    });
    const words = out.split('\0').slice(0, -1);
    assert.deepEqual(words.slice(0, -2), [
      '/usr/bin/node',
      '/opt/assay/bin/assay.js',
      'run',
      '--',
      'python',
      'train.py',
      nasty,
    ]);
    assert.deepEqual(words.slice(-2), ['tok-123', nasty]);
  });
});
