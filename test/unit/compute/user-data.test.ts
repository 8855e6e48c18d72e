import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, test } from 'node:test';
import { LaunchConfigError } from '../../../src/compute/compute-provider.ts';
import { clientToken, runTags } from '../../../src/compute/ec2-provider.ts';
import { buildUserData, shellQuote } from '../../../src/compute/user-data.ts';

const nasty = `it's "quoted" $HOME \`id\` \\ ; & | > * ? \n newline ü`;

/** Runs the script's body with `exec` swapped for a printer, so what bash would run is what we compare. */
function runScript(script: string): { env: Record<string, string>; argv: string[] } {
  const body = script
    .split('\n')
    .filter((line) => !line.startsWith('mkdir') && !line.startsWith('cd '))
    .join('\n')
    .replace(/^exec /m, 'printf "%s\\0" ');
  const out = execFileSync('bash', ['-c', `${body}\nprintf '%s\\0' "$SERVICE_RUN" "$WEIRD"`], {
    env: {},
    encoding: 'utf8',
  });
  const words = out.split('\0').slice(0, -1);
  return { argv: words.slice(0, -2), env: { SERVICE_RUN: words.at(-2)!, WEIRD: words.at(-1)! } };
}

describe('user data', () => {
  test('shellQuote survives bash', () => {
    assert.equal(execFileSync('bash', ['-c', `printf %s ${shellQuote(nasty)}`], { encoding: 'utf8' }), nasty);
  });

  test('exports the variables and execs the runner with the argv, word for word', () => {
    const script = buildUserData({
      env: { SERVICE_RUN: '3', WEIRD: nasty },
      command: ['python', 'train.py', nasty],
    });
    assert.match(script, /^#!\/bin\/bash\n/);
    assert.match(script, /^export SERVICE_RUN='3'$/m);
    const { env, argv } = runScript(script);
    assert.deepEqual(env, { SERVICE_RUN: '3', WEIRD: nasty });
    assert.deepEqual(argv, ['assay', 'run', '--', 'python', 'train.py', nasty]);
  });

  test('a command line runs through sh -c', () => {
    const { argv } = runScript(
      buildUserData({
        env: { SERVICE_RUN: '1', WEIRD: '' },
        command: 'python train.py --lr 0.1 > log',
        runner: '/opt/assay/bin/assay',
      }),
    );
    assert.deepEqual(argv, [
      '/opt/assay/bin/assay',
      'run',
      '--',
      'sh',
      '-c',
      'python train.py --lr 0.1 > log',
    ]);
  });

  test('rejects names that are not identifiers and empty commands', () => {
    assert.throws(() => buildUserData({ env: { 'A;rm -rf /': 'x' }, command: ['true'] }), LaunchConfigError);
    assert.throws(() => buildUserData({ env: {}, command: [] }), LaunchConfigError);
    assert.throws(() => buildUserData({ env: {}, command: '  ' }), LaunchConfigError);
  });
});

describe('EC2 request details', () => {
  test('clientToken keeps short keys and hashes long ones to 64 characters', () => {
    assert.equal(clientToken('run-e-1-2'), 'run-e-1-2');
    const long = clientToken(`run-${'x'.repeat(100)}`);
    assert.equal(long.length, 64);
    assert.equal(clientToken(`run-${'x'.repeat(100)}`), long);
    assert.notEqual(clientToken(`run-${'y'.repeat(100)}`), long);
  });

  test('tags name the run and never carry the API key', () => {
    const tags = runTags({
      idempotencyKey: 'run-e-1-2',
      env: {
        SERVICE_API_KEY: 'sk-secret',
        SERVICE_EXPERIMENT_ID: 'e',
        SERVICE_VARIATION: '1',
        SERVICE_RUN: '2',
      },
      launch: { command: ['true'] },
      tags: { team: 'vision', leak: 'sk-secret', 'assay:workflow': 'spoofed' },
      provisionedByAdmin: false,
      launchAuthor: null,
    });
    const byKey = Object.fromEntries(tags.map((t) => [t.Key, t.Value]));
    assert.deepEqual(byKey, {
      team: 'vision',
      Name: 'assay e v1 r2',
      'assay:experiment': 'e',
      'assay:variation': '1',
      'assay:run': '2',
      'assay:workflow': 'run-e-1-2',
    });
  });
});
