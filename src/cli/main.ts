import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../server/config.ts';

const USAGE = `usage: assay <command>

commands:
  server                         run the service (embedded PGlite unless DATABASE_URL is set)
  admin create-user --email E    create a user and print their first API key
        [--name N] [--admin] [--server-url URL]   (uses SERVICE_API_KEY: an admin key)
`;

/** Exit codes: 0 ok, 1 the operation failed, 2 bad usage or configuration. */
async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === 'server') {
    const { runServer } = await import('../server/server.ts');
    await runServer(loadConfig());
    return -1; // keeps running
  }
  if (command === 'admin' && rest[0] === 'create-user') {
    const { createUser } = await import('./admin-create-user.ts');
    const { values } = parseArgs({
      args: rest.slice(1),
      options: { email: { type: 'string' }, name: { type: 'string' }, admin: { type: 'boolean' }, 'server-url': { type: 'string' }, json: { type: 'boolean' } },
    });
    return createUser(values);
  }
  process.stderr.write(USAGE);
  return command === undefined || command === '--help' || command === 'help' ? 0 : 2;
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exitCode = code;
  },
  (err: unknown) => {
    if (err instanceof ConfigError || (err instanceof TypeError && 'code' in err && String(err.code).startsWith('ERR_PARSE_ARGS'))) {
      process.stderr.write(`assay: ${err.message}\n`);
      process.exitCode = 2;
      return;
    }
    process.stderr.write(`assay: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
