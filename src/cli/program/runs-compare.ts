// `assay runs compare`: the declaration; runs-compare.ts does the work.
import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import type { CompareOptions } from '../runs-compare.ts';
import { exitWith, jsonOption } from './shared-options.ts';

export function addRunsCompareCommand(group: Command): void {
  group
    .command('compare')
    .summary("an experiment's runs side by side: differing config values and each key's last value")
    .description(
      "an experiment's runs side by side: variation, run, state, the config values that differ between " +
        "them, and each metric key's last value (numbers to --digits significant digits); with --sweep, " +
        "that sweep's runs and its objective first. Keys: --keys, else the first few not under system/",
    )
    .argument('<experiment>', 'the experiment id')
    .option('--sweep <id>', "only this sweep's runs, its objective metric first")
    .option('--keys <k1,k2>', 'the metric keys to show, comma-separated (at most 50)')
    .option('--digits <n>', 'significant digits of numbers in the table (default 5)', digits)
    .addOption(jsonOption())
    .action(
      exitWith(async (e: string, o: CompareOptions) => (await import('../runs-compare.ts')).compare(e, o)),
    );
}

function digits(value: string): number {
  const n = Number(value);
  if (!/^\s*\d+\s*$/.test(value) || n < 1 || n > 17)
    throw new InvalidArgumentError('It must be a whole number from 1 to 17.');
  return n;
}
