// The `assay` command: a thin dispatcher. Each command group lives in its own module, loaded on demand.
import { parseArgs } from 'node:util';
import { dispatch, printUsage } from './command-args.ts';
import { reportError } from './output.ts';

const USAGE = `usage: assay <command> [--help]

researchers:
  auth login | status          store a key and a default organization; show the resolved settings
  experiments …                list, show, create (from YAML), commit, conclude, retract
  variations …                 list, show, create (from YAML)
  runs …                       list, show, create, cancel, provision (a managed run)
  sweeps …                     create (a grid or list over a base YAML, run as managed runs), show, cancel
  assets …                     upload, download, show, list
  search QUERY…                full-text search over reports, documents and papers

runners:
  run [--experiment ID --variation N [--run R]] -- COMMAND…
                               run any program as a run: config, heartbeats, outputs, succeed or fail

operators:
  server                       run the service (embedded PGlite and Temporal unless DATABASE_URL / TEMPORAL_ADDRESS are set)
  worker                       run a Temporal worker for managed runs (production: TEMPORAL_ADDRESS, ASSAY_SERVICE_URL, ASSAY_ORCHESTRATOR_KEY)
  admin create-user --email E  create a user and print their first API key (uses SERVICE_API_KEY: an admin key)
  admin orchestrator-key       print a new key for ASSAY_ORCHESTRATOR_KEY (service and workers share it)
  admin bootstrap-key [--keep] print the first admin's key from the data directory and delete its file

Exit codes: 0 ok, 1 the operation failed, 2 bad usage or configuration; \`assay run\` exits with its command's code.
See docs/cli.md.
`;

const AUTH_USAGE = `usage: assay auth <command>

  login    prompt for a key or token, choose a default organization, write ~/.assay (see: assay auth login --help)
  status   the resolved settings, the key masked, and where each came from
`;

type Command = (args: string[]) => Promise<number>;

const COMMANDS: Record<string, Command> = {
  auth: async (args) =>
    dispatch(
      AUTH_USAGE,
      {
        login: (await import('./auth-login.ts')).authLogin,
        status: (await import('./auth-status.ts')).authStatus,
      },
      args,
    ),
  run: async (args) => (await import('./run-command.ts')).runCommand(args),
  experiments: async (args) => (await import('./experiments-commands.ts')).experimentsCommand(args),
  variations: async (args) => (await import('./variations-commands.ts')).variationsCommand(args),
  runs: async (args) => (await import('./runs-commands.ts')).runsCommand(args),
  sweeps: async (args) => (await import('./sweeps-commands.ts')).sweepsCommand(args),
  assets: async (args) => (await import('./assets-commands.ts')).assetsCommand(args),
  search: async (args) => (await import('./search-command.ts')).searchCommand(args),
  server: async () => {
    const { ConfigError, loadConfig } = await import('../server/config.ts');
    const { orchestratorConfig } = await import('../orchestrator/orchestrator-config.ts');
    let config, orchestration;
    try {
      config = loadConfig();
      orchestration = orchestratorConfig(process.env);
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      process.stderr.write(`assay: ${error.message}\n`);
      return 2;
    }
    const { runServer } = await import('../server/server.ts');
    await runServer(config, orchestration);
    return -1; // keeps running
  },
  worker: async (args) => (await import('../orchestrator/worker-command.ts')).workerCommand(args),
  admin: async (args) => {
    if (args[0] === 'orchestrator-key' && args.length === 1) {
      // Offline: the operator puts the same key into the service's and the workers' ASSAY_ORCHESTRATOR_KEY.
      const { generateOrchestratorKey } = await import('../server/orchestration/orchestrator-keys.ts');
      process.stdout.write(`${generateOrchestratorKey()}\n`);
      return 0;
    }
    if (args[0] === 'bootstrap-key')
      return (await import('./admin-bootstrap-key.ts')).bootstrapKey(args.slice(1));
    const { createUser } = await import('./admin-create-user.ts');
    if (args[0] !== 'create-user') return dispatch(USAGE, {}, args);
    const { values } = parseArgs({
      args: args.slice(1),
      options: {
        email: { type: 'string' },
        name: { type: 'string' },
        admin: { type: 'boolean' },
        'server-url': { type: 'string' },
        json: { type: 'boolean' },
      },
    });
    return createUser(values);
  },
};

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  const run = command !== undefined && Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined;
  if (run) return run(rest);
  if (command === '--help' || command === '-h' || command === 'help') return printUsage(USAGE);
  process.stderr.write(
    command === undefined ? USAGE : `assay: unknown command ${JSON.stringify(command)}\n\n${USAGE}`,
  );
  return 2;
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exitCode = code;
  },
  (err: unknown) => {
    process.exitCode = reportError(err);
  },
);
