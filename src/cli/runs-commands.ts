// `assay runs …`: the runs of a variation; `assay run` (run-command.ts) is the runner itself.
import type { RunData } from '../client/resources/runs.ts';
import { openClient } from './cli-client.ts';
import { dispatch, parseCommand, positiveInt } from './command-args.ts';
import { printFields, printJson, printTable } from './output.ts';

const USAGE = `usage: assay runs <command> [--json]

  list EXPERIMENT N            the runs of variation N
  show EXPERIMENT N R
  create EXPERIMENT N          a new pending run (of a committed experiment)
  cancel EXPERIMENT N R        a pending run fails at once; a running one is asked to stop
  provision EXPERIMENT N R     run it as a managed run: the server's orchestrator starts its workflow, which
                               provisions an instance running it; prints the workflow and its Temporal UI URL
`;

const JSON_OPTION = { json: { type: 'boolean' } } as const;

export function runsCommand(args: string[]): Promise<number> {
  return dispatch(USAGE, { list, show, create, cancel, provision }, args);
}

function variationOf(positionals: string[]): [string, number] {
  return [positionals[0]!, positiveInt(positionals[1], 'N')!];
}

async function list(args: string[]): Promise<number> {
  const { values, positionals } = parseCommand(args, JSON_OPTION, { min: 2, max: 2 });
  const runs = await openClient().client.runs.list(...variationOf(positionals));
  if (values.json) {
    printJson(runs);
    return 0;
  }
  printTable(runs, [
    ['R', (r) => r.r],
    ['STATE', (r) => r.state],
    ['FAILURE', (r) => r.failure_reason],
    ['STARTED', (r) => r.started_at],
    ['ENDED', (r) => r.ended_at],
    ['MESSAGE', (r) => r.failure_message],
  ]);
  return 0;
}

async function show(args: string[]): Promise<number> {
  const { values, positionals } = parseCommand(args, JSON_OPTION, { min: 3, max: 3 });
  const run = await openClient().client.runs.get(
    ...variationOf(positionals),
    positiveInt(positionals[2], 'R')!,
  );
  if (values.json) {
    printJson(run);
    return 0;
  }
  printRun(run);
  return 0;
}

async function create(args: string[]): Promise<number> {
  const { values, positionals } = parseCommand(args, JSON_OPTION, { min: 2, max: 2 });
  const run = await openClient().client.runs.create(...variationOf(positionals));
  if (values.json) printJson(run);
  else
    process.stdout.write(
      `created run ${run.r} of variation ${run.n} of experiment ${run.experiment_id} (${run.state})\n`,
    );
  return 0;
}

async function cancel(args: string[]): Promise<number> {
  const { values, positionals } = parseCommand(args, JSON_OPTION, { min: 3, max: 3 });
  const run = await openClient().client.runs.cancel(
    ...variationOf(positionals),
    positiveInt(positionals[2], 'R')!,
  );
  if (values.json) printJson(run);
  else
    process.stdout.write(
      run.state === 'failed'
        ? `run ${run.r} cancelled (failed: ${run.failure_reason})\n`
        : `run ${run.r} asked to stop (it is told on its next heartbeat)\n`,
    );
  return 0;
}

async function provision(args: string[]): Promise<number> {
  const { values, positionals } = parseCommand(args, JSON_OPTION, { min: 3, max: 3 });
  const provisioned = await openClient().client.runs.provision(
    ...variationOf(positionals),
    positiveInt(positionals[2], 'R')!,
  );
  if (values.json) {
    printJson(provisioned);
    return 0;
  }
  const { run } = provisioned;
  process.stdout.write(
    `provisioning run ${run.r} of variation ${run.n} of experiment ${run.experiment_id} (${run.state})\n`,
  );
  printFields([
    ['workflow', provisioned.workflow_id],
    ...(provisioned.workflow_url ? [['temporal ui', provisioned.workflow_url] as const] : []),
  ]);
  return 0;
}

function printRun(run: RunData): void {
  printFields([
    ['experiment', run.experiment_id],
    ['variation', run.n],
    ['run', run.r],
    ['id', run.id],
    ['state', run.state],
    [
      'failure',
      run.failure_reason === null
        ? undefined
        : `${run.failure_reason}${run.failure_message ? `: ${run.failure_message}` : ''}`,
    ],
    ['cancel requested', run.cancel_requested ? 'yes' : undefined],
    ['created', run.created_at],
    ['started', run.started_at],
    ['last heartbeat', run.last_heartbeat_at],
    ['ended', run.ended_at],
    ['managed', run.managed ? 'yes' : 'no'],
    ['workflow', run.workflow_id],
    ['temporal ui', run.workflow_url],
    ['recovers run', run.recovers_run_id],
    ['environment', run.environment],
  ]);
}
