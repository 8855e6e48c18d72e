// `assay variations …`: the declaration of the commands; variations-commands.ts does the work.
import type { Command } from 'commander';
import { wholeNumber } from '../command-args.ts';
import type { CreateOptions } from '../variations-commands.ts';
import { exitWith, jsonOption, type JsonOptions } from './shared-options.ts';

const load = () => import('../variations-commands.ts');

export function addVariationsCommands(program: Command): void {
  const group = program.command('variations').description('the configs of an experiment: list, show, create');

  group
    .command('list')
    .description('the variations of an experiment')
    .argument('<experiment>', 'the experiment id')
    .addOption(jsonOption())
    .action(exitWith(async (e: string, o: JsonOptions) => (await load()).list(e, o)));

  group
    .command('show')
    .description('the variation with its YAML and the split-out launch and accelerate blocks')
    .argument('<experiment>', 'the experiment id')
    .argument('<n>', 'the variation number', wholeNumber)
    .addOption(jsonOption())
    .action(exitWith(async (e: string, n: number, o: JsonOptions) => (await load()).show(e, n, o)));

  group
    .command('create')
    .description(
      'from a YAML config (draft experiments only); top-level launch: and accelerate: blocks are split out',
    )
    .argument('<experiment>', 'the experiment id')
    .requiredOption('-f, --file <file>', 'the variation config as YAML, sent as written')
    .option('--name <name>', 'the variation name')
    .addOption(jsonOption())
    .action(exitWith(async (e: string, o: CreateOptions) => (await load()).create(e, o)));
}
