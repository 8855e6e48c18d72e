// `assay runs list` and `assay runs update`: which runs, found by state and tag, and their labels.
import { Option, type Command } from 'commander';
import { RUN_STATES } from '@assay/contract';
import { collect, wholeNumber } from '../command-args.ts';
import type { ListRunsOptions, UpdateRunOptions } from '../run-labels-commands.ts';
import { exitWith, jsonOption } from './shared-options.ts';

const load = () => import('../run-labels-commands.ts');

export function addRunLabelsCommands(group: Command): void {
  group
    .command('list')
    .summary('the runs of variation N, or of every variation (newest first)')
    .description(
      'the runs of variation N in run order, or without N those of every variation of the experiment, ' +
        'newest first; archived runs are left out unless --archived',
    )
    .argument('<experiment>', 'the experiment id')
    .argument('[n]', 'the variation number (default: every variation)', wholeNumber)
    .option('--tag <tag>', 'only runs with this tag (repeat: every one)', collect)
    .addOption(new Option('--state <state>', 'only runs in this state').choices([...RUN_STATES]))
    .option('--archived', 'archived runs too')
    .option('--limit <n>', 'without N: at most N per page', wholeNumber)
    .option('--all', 'without N: every page, not only the first')
    .addOption(jsonOption())
    .action(
      exitWith(async (e: string, n: number | undefined, o: ListRunsOptions) => (await load()).list(e, n, o)),
    );

  group
    .command('update')
    .summary("a run's name, tags or notes; archive or unarchive it")
    .description(
      "changes a run's name, tags (--tag replaces them all) or notes (markdown), or archives it: an archived " +
        'run is left out of lists and comparisons, and kept',
    )
    .argument('<experiment>', 'the experiment id')
    .argument('<n>', 'the variation number', wholeNumber)
    .argument('<r>', 'the run number', wholeNumber)
    .option('--name <name>', 'its name')
    .option('--no-name', 'clear its name')
    .addOption(new Option('--tag <tag>', 'its tags, replacing them (repeat for more)').argParser(collect))
    .addOption(new Option('--clear-tags', 'remove every tag').conflicts('tag'))
    .addOption(new Option('--notes <text>', 'its notes (markdown)'))
    .addOption(new Option('--notes-file <file>', 'its notes, read from a file').conflicts('notes'))
    .addOption(new Option('--archive', 'hide it from lists and comparisons (kept)'))
    .addOption(new Option('--unarchive', 'bring it back').conflicts('archive'))
    .addOption(jsonOption())
    .action(
      exitWith(async (e: string, n: number, r: number, o: UpdateRunOptions) =>
        (await load()).update(e, n, r, o),
      ),
    );
}
