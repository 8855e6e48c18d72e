// `assay runs …`: the declaration of the commands; runs-commands.ts does the work.
import type { Command } from 'commander';
import { priority, wholeNumber } from '../command-args.ts';
import type { MetricsOptions, ProvisionOptions } from '../runs-commands.ts';
import { addRunsLogsCommand } from './runs-logs.ts';
import { exitWith, jsonOption, type JsonOptions } from './shared-options.ts';

const load = () => import('../runs-commands.ts');

export function addRunsCommands(program: Command): void {
  const group = program
    .command('runs')
    .description('the runs of a variation: list, show, create, cancel, provision (a managed run), metrics');
  const variation = (c: Command) =>
    c
      .argument('<experiment>', 'the experiment id')
      .argument('<n>', 'the variation number', wholeNumber)
      .addOption(jsonOption());
  const run = (c: Command) => variation(c).argument('<r>', 'the run number', wholeNumber);

  variation(group.command('list').description('the runs of variation N')).action(
    exitWith(async (e: string, n: number, o: JsonOptions) => (await load()).list(e, n, o)),
  );
  run(group.command('show').description('one run: state, times, failure, workflow, environment')).action(
    exitWith(async (e: string, n: number, r: number, o: JsonOptions) => (await load()).show(e, n, r, o)),
  );
  variation(group.command('create').description('a new pending run (of a committed experiment)')).action(
    exitWith(async (e: string, n: number, o: JsonOptions) => (await load()).create(e, n, o)),
  );
  run(
    group.command('cancel').description('a pending run fails at once; a running one is asked to stop'),
  ).action(
    exitWith(async (e: string, n: number, r: number, o: JsonOptions) => (await load()).cancel(e, n, r, o)),
  );
  run(
    group
      .command('provision')
      .summary('run it as a managed run: prints its workflow and Temporal UI URL')
      .description(
        "run it as a managed run: the server's orchestrator starts its workflow, which provisions an " +
          'instance running it (on `local`, once the compute queue has room); prints the workflow and its ' +
          'Temporal UI URL',
      ),
  )
    .option(
      '--priority <n>',
      'its place in the compute queue: -100 to 100, higher first; equal priorities take turns by user',
      priority,
    )
    .action(
      exitWith(async (e: string, n: number, r: number, o: ProvisionOptions) =>
        (await load()).provision(e, n, r, o),
      ),
    );
  run(
    group
      .command('metrics')
      .summary("a run's metrics: each key's count, last, min and max, or one key's points")
      .description(
        "a run's metrics: each key's count, last point, min and max; with --key, that key's points in step " +
          'order (every point, or about --max-points of them, downsampled by the server)',
      ),
  )
    .option('--key <key>', "one key's points instead of the summary of every key")
    .option('--max-points <n>', 'with --key: downsample to about N points (2 to 10000)', wholeNumber)
    .action(
      exitWith(async (e: string, n: number, r: number, o: MetricsOptions) =>
        (await load()).metrics(e, n, r, o),
      ),
    );
  addRunsLogsCommand(group);
}
