import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import { runCli, tempHome } from '../support/cli.ts';

// None of these reach a server: help and usage errors are answered before any client exists.
describe('help and usage errors', () => {
  let home: string;
  const cli = (args: string[]) => runCli(args, { home });
  before(async () => {
    home = await tempHome();
  });
  after(() => rm(home, { recursive: true, force: true }));

  it('assay --help lists every command by audience on stdout, exit 0', async () => {
    const r = await cli(['--help']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^Usage: assay /);
    for (const group of ['Researchers:', 'Runners:', 'Operators:'])
      assert.match(r.stdout, new RegExp(`^${group}$`, 'm'));
    for (const command of [
      'auth',
      'experiments',
      'variations',
      'runs',
      'sweeps',
      'assets',
      'search',
      'run',
      'server',
      'worker',
      'admin',
    ])
      assert.match(r.stdout, new RegExp(`^  ${command}\\b`, 'm'), command);
  });

  it('a group and a subcommand have help of their own: arguments and options', async () => {
    const runs = await cli(['runs', '--help']);
    assert.equal(runs.code, 0, runs.stderr);
    assert.match(runs.stdout, /^  provision \[options\] <experiment> <n> <r>/m);
    const provision = await cli(['runs', 'provision', '--help']);
    assert.equal(provision.code, 0, provision.stderr);
    assert.match(provision.stdout, /^Usage: assay runs provision \[options\] <experiment> <n> <r>$/m);
    assert.match(provision.stdout, /^  --json /m);
    const run = await cli(['run', '--help']);
    assert.match(run.stdout, /^  --heartbeat-interval <seconds>/m);
    assert.match(run.stdout, /ASSAY_CONFIG_FILE/);
  });

  it('no command: the help on stderr, exit 2', async () => {
    const r = await cli([]);
    assert.equal(r.code, 2);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /^Usage: assay /);
  });

  it('an unknown command, flag or value: exit 2 and one line on stderr', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['nope'], /^assay: unknown command 'nope'$/],
      [['experiments', 'lst'], /^assay: unknown command 'lst' \(Did you mean list\?\)$/],
      [['experiments', 'list', '--bogus'], /^assay: unknown option '--bogus'$/],
      [
        ['experiments', 'list', '--state', 'done'],
        /^assay: option '--state <state>' argument 'done' is invalid\./,
      ],
      [
        ['runs', 'show', 'x', 'one', '1'],
        /^assay: command-argument value 'one' is invalid for argument 'n'\./,
      ],
      [['runs', 'list', 'x', '1', 'extra'], /^assay: too many arguments for 'list'/],
      [['auth', 'login', '--personal', '--organization', 'acme'], /cannot be used with option '--personal'$/],
      [['admin', 'create-user'], /^assay: required option '--email <email>' not specified$/],
    ];
    for (const [args, message] of cases) {
      const r = await cli(args);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.equal(r.stdout, '');
      assert.equal(r.stderr.split('\n').length, 2, `one line for ${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr.trimEnd(), message);
    }
  });
});
