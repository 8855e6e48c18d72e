// `assay run`: the runner for any program in any language; which run, and the options. The flow
// is run-supervisor.ts.
import path from 'node:path';
import { Client } from '../client/client.ts';
import { nodeFetch } from '../client/transport.ts';
import { environmentSnapshot } from '../client/environment.ts';
import { positiveInt, UsageError } from './command-args.ts';
import { exchangeWorkerKey } from './run-key-exchange.ts';
import { supervise } from './run-supervisor.ts';

export interface RunOptions {
  experiment?: string;
  variation?: number;
  run?: number;
  outputs: string;
  heartbeatInterval: number;
  grace: number;
  onSignal: 'fail' | 'leave';
  name?: string;
  tag?: string[];
  notes?: string;
  resumeFrom?: { n?: number; r: number };
  logFlushTimeout: number;
  systemMetricsInterval: number;
}

export async function runCommand(command: string[], values: RunOptions): Promise<number> {
  if (command.length === 0) throw new UsageError('no command to run: assay run [options] -- COMMAND [ARG…]');
  const ids = runIds(values, process.env);
  if (ids.r !== undefined && values.resumeFrom !== undefined)
    throw new UsageError('--resume-from is for a new run: it cannot be given with --run (or SERVICE_RUN)');
  const labels = { name: values.name, tags: values.tag, notes: values.notes };
  const relabel = Object.values(labels).some((v) => v !== undefined);
  const settings = {
    heartbeatMs: values.heartbeatInterval * 1000,
    graceMs: values.grace * 1000,
    outputsDir: path.resolve(values.outputs),
    onSignal: values.onSignal,
    logFlushMs: values.logFlushTimeout * 1000,
    systemMetricsS: values.systemMetricsInterval,
    logMemoryBytes: megabytes(process.env, 'ASSAY_RUN_LOG_MEMORY_MB'),
    logDiskBytes: megabytes(process.env, 'ASSAY_RUN_LOG_DISK_MB'),
    // Taken while the key is exchanged and the config read: the start waits for it, and a managed run's
    // start-up is on its sweep's critical path.
    environment: environmentSnapshot(command, process.cwd(), process.env, { runnerFile: process.argv[1] }),
  };
  await exchangeWorkerKey(process.env);
  // node:http instead of Node's fetch: a managed instance's runner makes a handful of
  // calls (core/node-fetch.ts).
  const client = new Client({ fetch: nodeFetch });
  try {
    const run =
      ids.r === undefined
        ? await client
            .variation(ids.experimentId, ids.n)
            .createRun({ ...labels, resumeFrom: values.resumeFrom })
        : client.run(ids.experimentId, ids.n, ids.r);
    // An existing run is relabelled (a person's key may; a worker key may not).
    if (ids.r !== undefined && relabel) await client.runs.update(ids.experimentId, ids.n, ids.r, labels);
    return await supervise(client, run, command, settings);
  } finally {
    client.close();
  }
}

/** A size in MB (fractions allowed) from a variable, in bytes; undefined when it is not set. */
function megabytes(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const value = env[name]?.trim();
  if (!value) return undefined;
  const mb = Number(value);
  if (!Number.isFinite(mb) || mb <= 0)
    throw new UsageError(`${name} must be a positive number of MB, got ${JSON.stringify(value)}`);
  return Math.round(mb * 1024 * 1024);
}

/** Flags when any is given (never mixed with the environment), else a managed worker's variables. */
function runIds(values: RunOptions, env: NodeJS.ProcessEnv): { experimentId: string; n: number; r?: number } {
  const which =
    'which run? give --experiment and --variation (and --run for an existing run), or set SERVICE_EXPERIMENT_ID, SERVICE_VARIATION and SERVICE_RUN';
  if (values.experiment !== undefined || values.variation !== undefined || values.run !== undefined) {
    if (!values.experiment || values.variation === undefined) throw new UsageError(which);
    return { experimentId: values.experiment, n: values.variation, r: values.run };
  }
  const [e, n, r] = [env.SERVICE_EXPERIMENT_ID, env.SERVICE_VARIATION, env.SERVICE_RUN].map(
    (v) => v?.trim() || undefined,
  );
  if (!e || n === undefined) throw new UsageError(which);
  return { experimentId: e, n: positiveInt(n, 'SERVICE_VARIATION')!, r: positiveInt(r, 'SERVICE_RUN') };
}
