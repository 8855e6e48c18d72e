// `assay sweeps …`: the declaration of the commands; sweeps-commands.ts does the work.
import { InvalidArgumentError, type Command } from 'commander';
import { collect, priority, seconds, wholeNumber } from '../command-args.ts';
import type { CreateOptions, ShowOptions } from '../sweeps-commands.ts';
import { exitWith, jsonOption, type JsonOptions } from './shared-options.ts';

const load = () => import('../sweeps-commands.ts');

/** A count that may be 0 (retries, a seed). */
function zeroOrMore(value: string): number {
  const n = Number(value);
  if (!/^\s*\d+\s*$/.test(value) || !Number.isSafeInteger(n))
    throw new InvalidArgumentError('It must be a whole number ≥ 0.');
  return n;
}

export function addSweepsCommands(program: Command): void {
  const group = program
    .command('sweeps')
    .description(
      'many managed runs from one base YAML: a grid, a list, a search of a space, or repeats: create, list, show, cancel',
    );

  group
    .command('create')
    .description(
      'a grid or list makes a variation per point on a draft experiment and commits it; a search (--space) ' +
        'makes one per trial as it goes; --repeat runs a committed experiment’s variations again. Each ' +
        'variation runs as a managed run, at most N at a time',
    )
    .argument('<experiment>', 'the experiment id')
    .option('--base <file>', 'the base variation config as YAML (required but with --repeat)')
    .option('--grid <file>', 'JSON: {"PATH": [values…], …}, every combination')
    .option('--list <file>', 'JSON: [{"PATH": value, …}, …], one point each')
    .option(
      '--set <path=v1,v2,…>',
      'a grid axis; repeat for more; PATH is dotted (optimizer.lr); a value that parses as JSON is JSON',
      collect,
    )
    .option(
      '--space <file>',
      'YAML or JSON: PATH → {distribution: uniform|log_uniform|int|choice, low, high | values}',
    )
    .option('--strategy <name>', 'how --space is searched: random (default), sobol or tpe')
    .option('--trials <n>', 'how many points --space is tried at (required with --space)', wholeNumber)
    .option('--repeat <n>', 'run each variation of a committed experiment N more times', wholeNumber)
    .option('--variations <n,n,…>', 'with --repeat: only these variations')
    .option('--metric <key>', 'the objective: the metric the runs log (its last value is the result)')
    .option('--goal <goal>', 'minimize (default) or maximize the --metric')
    .option(
      '--early-stopping <kind|file>',
      'stop poor trials by the --metric: asha, hyperband or median with their defaults, or a YAML file ' +
        '({kind: asha, min_step: 1, max_step: 30, reduction_factor: 3})',
    )
    .option(
      '--max-step <n>',
      'with --early-stopping asha or hyperband: the step a full trial reaches',
      wholeNumber,
    )
    .option(
      '--max-retries <n>',
      'new runs of a trial that crashed or lost its instance (default 0)',
      zeroOrMore,
    )
    .option(
      '--seed <n>',
      'the search’s (or the repeats’) seed: the same seed and results, the same points',
      zeroOrMore,
    )
    .option('--concurrency <n>', 'managed runs at a time (default 4)', wholeNumber)
    .option(
      '--priority <n>',
      'its runs’ place in the compute queue: -100 to 100, higher first (default 0)',
      priority,
    )
    .option('--name-prefix <prefix>', 'variations are named PREFIX PATH=VALUE … (default sweep)')
    .addOption(jsonOption())
    .action(exitWith(async (e: string, o: CreateOptions) => (await load()).create(e, o)));

  group
    .command('list')
    .description('the experiment’s sweeps, newest first: strategy, objective, best value, progress')
    .argument('<experiment>', 'the experiment id')
    .addOption(jsonOption())
    .action(exitWith(async (e: string, o: JsonOptions) => (await load()).list(e, o)));

  group
    .command('show')
    .description(
      'the sweep: its declaration, progress by run state, the best trial and a table of its trials ' +
        '(point, objective, step reached, state)',
    )
    .argument('<experiment>', 'the experiment id')
    .argument('<sweep>', 'the sweep id')
    .option('--watch', 'redraw as the sweep changes until it is done (exit 0 then)')
    .option('--interval <seconds>', 'with --watch: seconds between reads (default 2)', seconds)
    .addOption(jsonOption())
    .action(exitWith(async (e: string, id: string, o: ShowOptions) => (await load()).show(e, id, o)));

  group
    .command('cancel')
    .description("cancels the sweep's workflow, which cancels its runs and starts no more")
    .argument('<experiment>', 'the experiment id')
    .argument('<sweep>', 'the sweep id')
    .addOption(jsonOption())
    .action(exitWith(async (e: string, id: string, o: JsonOptions) => (await load()).cancel(e, id, o)));
}
