// `assay organizations …`: the declaration of the commands; organizations-commands.ts does the work.
import { Option, type Command } from 'commander';
import type { CreateOptions, AddMemberOptions } from '../organizations-commands.ts';
import { exitWith, jsonOption, type JsonOptions } from './shared-options.ts';

const load = () => import('../organizations-commands.ts');

export function addOrganizationsCommands(program: Command): void {
  const group = program
    .command('organizations')
    .alias('orgs')
    .description('organizations: create one, list yours, list and add members');

  group
    .command('create')
    .description('a new organization, with you as its owner')
    .argument('<name>', 'its name, e.g. "ML Lab"')
    .option('--slug <slug>', 'its short name in commands and URLs (default: from the name, e.g. ml-lab)')
    .addOption(jsonOption())
    .action(exitWith(async (name: string, o: CreateOptions) => (await load()).create(name, o)));

  group
    .command('list')
    .description('the organizations you belong to, your role in each, and which is your default')
    .addOption(jsonOption())
    .action(exitWith(async (o: JsonOptions) => (await load()).list(o)));

  const members = group.command('members').description("an organization's members: list, add");
  members
    .command('list')
    .description("an organization's members and their roles")
    .argument('<organization>', 'its id or slug')
    .addOption(jsonOption())
    .action(exitWith(async (org: string, o: JsonOptions) => (await load()).listMembers(org, o)));
  members
    .command('add')
    .description('add an existing user (owners only)')
    .argument('<organization>', 'its id or slug')
    .argument('<user>', "the user's email address or id")
    .addOption(new Option('--role <role>', 'their role').choices(['member', 'owner']).default('member'))
    .addOption(jsonOption())
    .action(
      exitWith(async (org: string, user: string, o: AddMemberOptions) =>
        (await load()).addMember(org, user, o),
      ),
    );
}
