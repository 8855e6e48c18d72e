// `assay sweeps …`: the declaration of the commands; sweeps-commands.ts does the work.
import type { Command } from 'commander';
import { collect, wholeNumber } from '../command-args.ts';
import type { CreateOptions } from '../sweeps-commands.ts';
import { exitWith, jsonOption, type JsonOptions } from './shared-options.ts';

const load = () => import('../sweeps-commands.ts');

export function addSweepsCommands(program: Command): void {
  const group = program
    .command('sweeps')
    .description('many managed runs from one base YAML, as a grid or a list: create, show, cancel');

  group
    .command('create')
    .description(
      'a draft experiment gets a variation per point, is committed, and each variation runs as a managed ' +
        'run, at most N at a time',
    )
    .argument('<experiment>', 'the experiment id (a draft)')
    .option('--base <file>', 'the base variation config as YAML (required)')
    .option('--grid <file>', 'JSON: {"PATH": [values…], …}, every combination')
    .option('--list <file>', 'JSON: [{"PATH": value, …}, …], one point each')
    .option(
      '--set <path=v1,v2,…>',
      'a grid axis; repeat for more; PATH is dotted (optimizer.lr); a value that parses as JSON is JSON',
      collect,
    )
    .option('--concurrency <n>', 'managed runs at a time (default 4)', wholeNumber)
    .option('--name-prefix <prefix>', 'variations are named PREFIX PATH=VALUE … (default sweep)')
    .addOption(jsonOption())
    .action(exitWith(async (e: string, o: CreateOptions) => (await load()).create(e, o)));

  group
    .command('show')
    .description('the sweep, its progress and its runs')
    .argument('<experiment>', 'the experiment id')
    .argument('<sweep>', 'the sweep id')
    .addOption(jsonOption())
    .action(exitWith(async (e: string, id: string, o: JsonOptions) => (await load()).show(e, id, o)));

  group
    .command('cancel')
    .description("cancels the sweep's workflow, which cancels its runs")
    .argument('<experiment>', 'the experiment id')
    .argument('<sweep>', 'the sweep id')
    .addOption(jsonOption())
    .action(exitWith(async (e: string, id: string, o: JsonOptions) => (await load()).cancel(e, id, o)));
}
