// `assay experiments …`: the declaration of the commands; experiments-commands.ts does the work.
import { Option, type Command } from 'commander';
import { EXPERIMENT_STATES } from '@assay/contract';
import type { CreateOptions, ListOptions, RetractOptions } from '../experiments-commands.ts';
import { collect, wholeNumber } from '../command-args.ts';
import { addExperimentLabelsCommands } from './experiment-labels.ts';
import { exitWith, jsonOption, organizationOption, type JsonOptions } from './shared-options.ts';

const STATES = [...EXPERIMENT_STATES];
const load = () => import('../experiments-commands.ts');

export function addExperimentsCommands(program: Command): void {
  const group = program
    .command('experiments')
    .description('list, show, create (from flags or YAML), commit, conclude, tag, delete (a draft), retract');

  group
    .command('list')
    .description('one page of experiments, newest first')
    .addOption(new Option('--state <state>', 'only experiments in this state').choices(STATES))
    .option('--query <text>', 'full-text filter on name, hypothesis and description')
    .option('--tag <tag>', 'only experiments with this tag (repeat: every one)', collect)
    .option('--limit <n>', 'at most N per page', wholeNumber)
    .option('--all', 'every page, not only the first')
    .addOption(organizationOption())
    .addOption(jsonOption())
    .action(exitWith(async (o: ListOptions) => (await load()).list(o)));

  group
    .command('show')
    .description('detail: variations, run counts, parents and children')
    .argument('<id>', 'the experiment')
    .addOption(jsonOption())
    .action(exitWith(async (id: string, o: JsonOptions) => (await load()).show(id, o)));

  group
    .command('create')
    .description('a draft, from flags or a YAML file (flags override its fields)')
    .option('-f, --file <file>', 'YAML with name, description, hypothesis, parent_ids, tags (no other keys)')
    .option('--name <name>', 'the name (required, here or in the file)')
    .option('--hypothesis <text>', 'what the experiment tests')
    .option('--description <text>', 'free text')
    .option('--parent <id>', 'a parent experiment (repeat for more)', collect)
    .option('--tag <tag>', 'a tag (repeat for more)', collect)
    .addOption(organizationOption())
    .addOption(jsonOption())
    .action(exitWith(async (o: CreateOptions) => (await load()).create(o)));

  for (const [name, description] of [
    ['commit', 'draft → committed: variations freeze, runs become possible'],
    ['conclude', 'committed → concluded: no new runs'],
  ] as const) {
    group
      .command(name)
      .description(description)
      .argument('<id>', 'the experiment')
      .addOption(jsonOption())
      .action(exitWith(async (id: string, o: JsonOptions) => (await load()).move(name, id, o)));
  }

  addExperimentLabelsCommands(group);

  group
    .command('retract')
    .description('committed | concluded → retracted')
    .argument('<id>', 'the experiment')
    .requiredOption('--reason <text>', 'why, kept with the experiment')
    .addOption(jsonOption())
    .action(exitWith(async (id: string, o: RetractOptions) => (await load()).retract(id, o)));
}
