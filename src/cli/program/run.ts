// `assay run`: the declaration of the runner; run-command.ts and run-supervisor.ts do the work.
import { Option, type Command } from 'commander';
import { collect, runReference, seconds, secondsOrZero, wholeNumber } from '../command-args.ts';
import type { RunOptions } from '../run-command.ts';
import { exitWith } from './shared-options.ts';

const HELP = `
Runs COMMAND as run R of variation N (a new run when --run is not given; --name, --tag, --notes label it,
--resume-from R or N.R makes it resume from that run's newest checkpoint): reads the variation's config,
starts the run with an environment snapshot (the git repository of the script COMMAND names, else of the
working directory: commit, dirty, branch, remote without credentials), heartbeats in the background,
uploads the files that appear in the outputs directory as assets of kind "output", records the metrics
COMMAND writes to ASSAY_METRICS_FILE, and succeeds or fails the run by how COMMAND ends.
COMMAND's stdout and stderr pass through unchanged and at once, and are the run's console log
(assay runs logs): lines with their stream and time, sent about once a second; a line without its newline
is sent after 1 s without output (the rest is the next line); a line redrawn with \r keeps its final state
(plus one state per 5 s); lines over 64 KiB are split. While the service is away, lines wait in memory
(ASSAY_RUN_LOG_MEMORY_MB, default 8), then on disk (ASSAY_RUN_LOG_DISK_MB, default 256; past it the oldest
unsent lines are dropped, counted in the log); after COMMAND exits they get --log-flush-timeout seconds.
Python runs unbuffered (PYTHONUNBUFFERED=1 unless set). Every --system-metrics-interval seconds the CPU %
and memory of COMMAND's processes, and each GPU's use, memory and power (nvidia-smi), are logged as metrics
system/cpu_percent, system/rss_mb, system/gpu0/utilization_percent, …/memory_used_mb, …/power_w.
A cancel (a person's, a sweep's, an early stop) arrives through a long-poll kept open on the service,
within about a second: COMMAND's process group gets SIGTERM, then SIGKILL after --grace seconds, and the
run fails "abandoned" (never succeeds).
Without the three flags, the ids come from SERVICE_EXPERIMENT_ID, SERVICE_VARIATION and SERVICE_RUN (the
variables of a managed worker). A managed worker's SERVICE_EXCHANGE_TOKEN is traded for its run's worker key
first (it works once); the key then takes SERVICE_API_KEY's place. Options end at "--" or at the first word
that is not one.

COMMAND gets, besides this environment:
  ASSAY_CONFIG_FILE     a JSON file: config_json, accelerate_config_json, launch_config and the run's ids
  ASSAY_OUTPUTS_DIR     where to write outputs (absolute)
  ASSAY_METRICS_FILE    append one JSON object per line for scalar metrics, e.g.
                        {"step": 10, "loss": 0.31, "acc": 0.9}; "timestamp" (ISO 8601 or Unix seconds) is
                        optional, a line without "step" takes the step after the previous line's; values are
                        numbers or NaN, Infinity, -Infinity (bare or quoted). The runner ships them as the run's
                        metrics while COMMAND runs, the last ones before the run ends; a malformed line is
                        reported with its number and skipped.
  ASSAY_EXPERIMENT_ID, ASSAY_VARIATION, ASSAY_RUN

Exit code: COMMAND's own (128 + n when signal n killed it); never 0 unless the run succeeded.
1 when the run could not be set up or reported, 2 on bad usage or configuration.`;

export function addRunCommand(program: Command): void {
  program
    .command('run')
    .description('run any program as a run: config, heartbeats, outputs, succeed or fail')
    .usage('[--experiment ID --variation N [--run R]] [options] -- COMMAND [ARG…]')
    .argument('[command...]', 'the program to run and its arguments')
    .option('--experiment <id>', 'the experiment')
    .option('--variation <n>', 'the variation number', wholeNumber)
    .option('--run <r>', 'an existing pending run (default: a new run)', wholeNumber)
    .option('--name <name>', 'the run’s name (with --run: renames it)')
    .option('--tag <tag>', 'a tag of the run, repeatable (with --run: replaces its tags)', collect)
    .option('--notes <text>', 'notes on the run, markdown (with --run: replaces them)')
    .option(
      '--resume-from <[n.]r>',
      'a new run resumes from the newest checkpoint of run R (of variation N; default: this variation)',
      runReference,
    )
    .option('--outputs <dir>', 'the outputs directory', 'outputs')
    .option('--heartbeat-interval <seconds>', 'seconds between heartbeats', seconds, 30)
    .addOption(
      new Option('--grace <seconds>', 'on a cancel or a signal: seconds between SIGTERM and SIGKILL')
        .env('ASSAY_RUN_GRACE_S')
        .argParser(secondsOrZero)
        .default(30),
    )
    .addOption(
      new Option(
        '--on-signal <what>',
        'a signal from outside: `fail` the run abandoned, or `leave` it to its orchestrator (batch schedulers)',
      )
        .env('ASSAY_RUN_ON_SIGNAL')
        .choices(['fail', 'leave'])
        .default('fail'),
    )
    .addOption(
      new Option(
        '--log-flush-timeout <seconds>',
        'after COMMAND exits: how long its last output lines may take to reach the service',
      )
        .env('ASSAY_RUN_LOG_FLUSH_S')
        .argParser(secondsOrZero)
        .default(30),
    )
    .addOption(
      new Option(
        '--system-metrics-interval <seconds>',
        'seconds between samples of CPU, memory and GPU metrics (system/…); 0: none',
      )
        .env('ASSAY_RUN_SYSTEM_METRICS_S')
        .argParser(secondsOrZero)
        .default(10),
    )
    .passThroughOptions()
    .addHelpText('after', HELP)
    .action(
      exitWith(async (command: string[], o: RunOptions) =>
        (await import('../run-command.ts')).runCommand(command, o),
      ),
    );
}
