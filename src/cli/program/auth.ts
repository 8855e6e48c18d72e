// `assay auth …`: the declaration of the commands; auth-login.ts and auth-status.ts do the work.
import { Option, type Command } from 'commander';
import type { LoginOptions } from '../auth-login.ts';
import type { StatusOptions } from '../auth-status.ts';
import { exitWith } from './shared-options.ts';

export function addAuthCommands(program: Command): void {
  const group = program
    .command('auth')
    .description('store a key and a default organization; show the resolved settings');

  group
    .command('login')
    .description(
      'prompt for an API key or access token (hidden), check it, choose a default organization, ' +
        'write ~/.assay',
    )
    .option('--server-url <url>', 'the server to log in to (stored in config.yaml)')
    .addOption(
      new Option('--organization <id|slug>', 'the default organization, without asking').conflicts(
        'personal',
      ),
    )
    .option('--personal', 'no default organization: calls use your personal scope')
    .option('--no-verify', 'store the key without calling the server (no organization list then)')
    .addHelpText(
      'after',
      `
Checks the key against the server, lists your organizations and asks for the default one (a number or a
slug; Enter keeps the current one). Merges server_url and the organization into ~/.assay/config.yaml and
replaces ~/.assay/credentials.yaml (mode 600). When stdin is not a terminal, each answer is read as one
line of stdin.`,
    )
    .action(exitWith(async (o: LoginOptions) => (await import('../auth-login.ts')).authLogin(o)));

  group
    .command('status')
    .description('the resolved settings, the key masked, and where each came from')
    .option('--verify', 'also ask the server who the key belongs to (exit code 1 when it refuses)')
    .option('--json', 'machine-readable output')
    .addHelpText(
      'after',
      `
Order: environment, then ~/.assay files or SERVICE_CONFIG, then defaults. Exit code 2 when no API key is
configured.`,
    )
    .action(exitWith(async (o: StatusOptions) => (await import('../auth-status.ts')).authStatus(o)));
}
