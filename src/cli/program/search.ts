// `assay search …`: the declaration of the command; search-command.ts does the work.
import type { Command } from 'commander';
import { wholeNumber } from '../command-args.ts';
import type { SearchOptions } from '../search-command.ts';
import { exitWith, jsonOption, organizationOption } from './shared-options.ts';

export function addSearchCommand(program: Command): void {
  program
    .command('search')
    .description('full-text search over reports, documents and papers')
    .argument('<query...>', 'words, "quoted phrases", -exclusions and "or" (websearch syntax)')
    .option('--kind <kind>', 'only assets of this kind')
    .option('--limit <n>', 'at most N hits', wholeNumber)
    .addOption(organizationOption())
    .addOption(jsonOption())
    .addHelpText('after', '\nA server without search answers 503 (exit code 1).')
    .action(
      exitWith(async (words: string[], o: SearchOptions) =>
        (await import('../search-command.ts')).searchCommand(words, o),
      ),
    );
}
