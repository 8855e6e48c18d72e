// `assay runs logs`: the declaration; runs-logs-command.ts does the work.
import { InvalidArgumentError, Option, type Command } from 'commander';
import { wholeNumber } from '../command-args.ts';
import type { RunsLogsOptions } from '../runs-logs-command.ts';
import { exitWith } from './shared-options.ts';

/** A seq to read after: 0 (the start) or more. */
function seq(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n))
    throw new InvalidArgumentError('It must be a whole number ≥ 0.');
  return n;
}

export function addRunsLogsCommand(group: Command): void {
  group
    .command('logs')
    .summary("a run's console log: what its program printed (stderr lines on stderr)")
    .description(
      "a run's console log as `assay run` captured it: stdout lines on stdout, stderr lines on stderr; with " +
        '--follow, waits for new lines until the run has ended and every line was printed. Where the ' +
        "service's size cap (ASSAY_RUN_LOG_MAX_MB) dropped lines, a line `[… N lines dropped …]` stands in " +
        'for them',
    )
    .argument('<experiment>', 'the experiment id')
    .argument('<n>', 'the variation number', wholeNumber)
    .argument('<r>', 'the run number', wholeNumber)
    .option('-f, --follow', 'keep printing new lines until the run has ended')
    .addOption(new Option('--stream <stream>', 'only this stream').choices(['stdout', 'stderr']))
    .option('--after <seq>', 'only the lines after this seq (0: from the start)', seq)
    .action(
      exitWith(async (e: string, n: number, r: number, o: RunsLogsOptions) =>
        (await import('../runs-logs-command.ts')).runsLogs(e, n, r, o),
      ),
    );
}
