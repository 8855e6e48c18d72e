// `assay experiments tag` and `assay experiments delete`: an experiment's tags, and removing a draft.
import type { Command } from 'commander';
import { collect } from '../command-args.ts';
import type { DeleteOptions, TagOptions } from '../experiment-labels-commands.ts';
import { exitWith, jsonOption } from './shared-options.ts';

const load = () => import('../experiment-labels-commands.ts');

export function addExperimentLabelsCommands(group: Command): void {
  group
    .command('tag')
    .description('adds tags to an experiment (or --remove them), in any state; prints its tags')
    .argument('<id>', 'the experiment')
    .argument('[tags...]', 'tags to add')
    .option('--remove <tag>', 'a tag to remove (repeat for more)', collect)
    .addOption(jsonOption())
    .action(exitWith(async (id: string, tags: string[], o: TagOptions) => (await load()).tag(id, tags, o)));

  group
    .command('delete')
    .description(
      'deletes a draft with its variations and assets (never a committed one); asks first unless --yes',
    )
    .argument('<id>', 'the experiment')
    .option('-y, --yes', 'do not ask')
    .action(exitWith(async (id: string, o: DeleteOptions) => (await load()).remove(id, o)));
}
