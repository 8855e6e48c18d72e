// `assay server`, `assay worker`, `assay admin …`: the operators' commands, each loading its part on demand.
import type { Command } from 'commander';
import type { CreateUserOptions } from '../admin-create-user.ts';
import { exitWith } from './shared-options.ts';

const WORKER_SETTINGS = `
Settings come from the environment:
  TEMPORAL_ADDRESS (required)        host:port of the Temporal frontend
  ASSAY_SERVICE_URL (required)       the Assay service the activities call
  ASSAY_ORCHESTRATOR_KEY (required)  the orchestrator key the service was given (assay admin orchestrator-key)
  TEMPORAL_NAMESPACE, ASSAY_TASK_QUEUE, ASSAY_WORKER_MAX_ACTIVITIES, ASSAY_WORKER_MAX_WORKFLOWS,
  ASSAY_COMPUTE (local | ec2) and the EC2_* settings, ASSAY_RUNNER_SERVER_URL
See README.md, "Managed runs".`;

export function addOperatorCommands(program: Command): void {
  program
    .command('server')
    .description(
      'run the service (embedded PGlite and Temporal unless DATABASE_URL / TEMPORAL_ADDRESS are set)',
    )
    .option(
      '--workers <n>',
      'HTTP worker processes sharing the port (ASSAY_WORKERS; default: the core count on PostgreSQL, 1 on PGlite)',
    )
    .addHelpText('after', '\nSettings come from the environment: see README.md, "Configuration".')
    .action(exitWith(serve));

  program
    .command('worker')
    .description('run a Temporal worker for managed runs (TEMPORAL_ADDRESS, ASSAY_SERVICE_URL, …)')
    .addHelpText('after', WORKER_SETTINGS)
    .action(
      exitWith(async () => (await import('../../orchestrator/worker-command.ts')).workerCommand(process.env)),
    );

  const admin = program.command('admin').description('users and keys of a deployment');
  admin
    .command('create-user')
    .description('create a user and print their first API key (SERVICE_API_KEY must hold an admin key)')
    .requiredOption('--email <email>', "the user's email")
    .option('--name <name>', "the user's name")
    .option('--admin', 'an administrator')
    .option('--server-url <url>', 'the service (default SERVICE_SERVER_URL, else http://127.0.0.1:8080)')
    .option('--json', 'print the user and key as JSON')
    .action(
      exitWith(async (o: CreateUserOptions) => (await import('../admin-create-user.ts')).createUser(o)),
    );
  admin
    .command('bootstrap-key')
    .description("print the first admin's key from the data directory (ASSAY_DATA_DIR) and delete its file")
    .option('--keep', 'leave the file in place')
    .action(
      exitWith(async (o: { keep?: boolean }) => (await import('../admin-bootstrap-key.ts')).bootstrapKey(o)),
    );
  admin
    .command('orchestrator-key')
    .description('print a new key for ASSAY_ORCHESTRATOR_KEY (the service and its workers share it)')
    .action(
      exitWith(async () => {
        // Offline: the operator puts the same key into the service's and the workers' settings.
        const { generateOrchestratorKey } = await import('../../server/orchestration/orchestrator-keys.ts');
        process.stdout.write(`${generateOrchestratorKey()}\n`);
        return 0;
      }),
    );
}

async function serve(options: { workers?: string }): Promise<number> {
  const { ConfigError, loadConfig } = await import('../../server/config.ts');
  // The flag is the setting: the HTTP workers of a cluster read it from the environment they inherit.
  if (options.workers !== undefined) process.env.ASSAY_WORKERS = options.workers;
  const { orchestratorConfig } = await import('../../orchestrator/orchestrator-config.ts');
  let config, orchestration;
  try {
    config = loadConfig();
    orchestration = orchestratorConfig(process.env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`assay: ${error.message}\n`);
    return 2;
  }
  const { runServer } = await import('../../server/server.ts');
  await runServer(config, orchestration);
  return -1; // keeps running
}
