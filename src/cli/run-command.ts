// `assay run`: the runner for any program in any language; which run, and the options. The flow is run-supervisor.ts.
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Client } from '../client/client.ts';
import {
  nonNegativeSeconds,
  parseCommand,
  positiveInt,
  positiveSeconds,
  printUsage,
  UsageError,
  wantsHelp,
} from './command-args.ts';
import { supervise } from './run-supervisor.ts';

const USAGE = `usage: assay run [--experiment ID --variation N [--run R]] [options] -- COMMAND [ARG…]

Runs COMMAND as run R of variation N (a new run when --run is not given): reads the variation's config,
starts the run with an environment snapshot, heartbeats in the background, uploads the files that appear in
the outputs directory as assets of kind "output", and succeeds or fails the run by how COMMAND ends.
Without the three flags, the ids come from SERVICE_EXPERIMENT_ID, SERVICE_VARIATION and SERVICE_RUN (the
variables of a managed worker).

COMMAND gets, besides this environment:
  ASSAY_CONFIG_FILE     a JSON file: config_json, accelerate_config_json, launch_config and the run's ids
  ASSAY_OUTPUTS_DIR     where to write outputs (absolute)
  ASSAY_EXPERIMENT_ID, ASSAY_VARIATION, ASSAY_RUN

options:
  --outputs DIR               the outputs directory (default ./outputs)
  --heartbeat-interval SECS   seconds between heartbeats (default 30)
  --grace SECS                on a cancel or a signal: seconds between SIGTERM and SIGKILL (default 30)

Exit code: COMMAND's own (128 + n when signal n killed it); never 0 unless the run succeeded.
1 when the run could not be set up or reported, 2 on bad usage or configuration.
`;

const OPTIONS = {
  experiment: { type: 'string' },
  variation: { type: 'string' },
  run: { type: 'string' },
  outputs: { type: 'string' },
  'heartbeat-interval': { type: 'string' },
  grace: { type: 'string' },
} as const;

export async function runCommand(args: string[]): Promise<number> {
  const [options, command] = splitCommand(args);
  if (wantsHelp(options)) return printUsage(USAGE);
  const { values } = parseCommand(options, OPTIONS);
  if (command.length === 0) throw new UsageError('no command to run: assay run [options] -- COMMAND [ARG…]');
  const ids = runIds(values, process.env);
  const settings = {
    heartbeatMs: positiveSeconds(values['heartbeat-interval'], '--heartbeat-interval', 30) * 1000,
    graceMs: nonNegativeSeconds(values.grace, '--grace', 30) * 1000,
    outputsDir: path.resolve(values.outputs ?? 'outputs'),
  };
  const client = new Client();
  try {
    const run =
      ids.r === undefined
        ? await client.variation(ids.experimentId, ids.n).createRun()
        : client.run(ids.experimentId, ids.n, ids.r);
    return await supervise(client, run, command, settings);
  } finally {
    client.close();
  }
}

/** Options before `--` (or before the first word that is not an option), the command after. */
function splitCommand(args: string[]): [string[], string[]] {
  const dash = args.indexOf('--');
  if (dash >= 0) return [args.slice(0, dash), args.slice(dash + 1)];
  const { tokens } = parseArgs({
    args,
    options: OPTIONS,
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  const first = tokens.find((t) => t.kind === 'positional');
  return first ? [args.slice(0, first.index), args.slice(first.index)] : [args, []];
}

/** Flags when any is given (never mixed with the environment), else a managed worker's variables. */
function runIds(values: { experiment?: string; variation?: string; run?: string }, env: NodeJS.ProcessEnv) {
  const fromFlags =
    values.experiment !== undefined || values.variation !== undefined || values.run !== undefined;
  const [e, n, r] = fromFlags
    ? [values.experiment, values.variation, values.run]
    : [env.SERVICE_EXPERIMENT_ID, env.SERVICE_VARIATION, env.SERVICE_RUN].map((v) => v?.trim() || undefined);
  const names = fromFlags
    ? ['--experiment', '--variation', '--run']
    : ['SERVICE_EXPERIMENT_ID', 'SERVICE_VARIATION', 'SERVICE_RUN'];
  if (!e || n === undefined) {
    throw new UsageError(
      'which run? give --experiment and --variation (and --run for an existing run), or set SERVICE_EXPERIMENT_ID, SERVICE_VARIATION and SERVICE_RUN',
    );
  }
  return { experimentId: e, n: positiveInt(n, names[1]!)!, r: positiveInt(r, names[2]!) };
}
