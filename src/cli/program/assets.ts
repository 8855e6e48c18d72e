// `assay assets …`: the declaration of the commands; assets-commands.ts does the work.
import { ASSET_STATES } from '@assay/contract';
import { Option, type Command } from 'commander';
import { wholeNumber } from '../command-args.ts';
import type { DownloadOptions, ListOptions, UploadOptions } from '../assets-commands.ts';
import { exitWith, jsonOption, organizationOption, type JsonOptions } from './shared-options.ts';

const load = () => import('../assets-commands.ts');

/** `--experiment` alone links to the experiment; with `--variation` and `--run`, to one run. */
function linkOptions(c: Command): Command {
  return c
    .option('--experiment <id>', 'the experiment')
    .option('--variation <n>', 'with --experiment and --run: one run', wholeNumber)
    .option('--run <r>', 'with --experiment and --variation: one run', wholeNumber);
}

export function addAssetsCommands(program: Command): void {
  const group = program.command('assets').description('files: upload, download, show, list');

  linkOptions(
    group
      .command('upload')
      .description(
        'one asset with a component per file; report, document and paper assets are indexed for search',
      )
      .argument('<file...>', 'the files')
      .requiredOption('--kind <kind>', 'report, document, paper, output, checkpoint, …')
      .option('--name <name>', 'the asset name (default: the first file name)'),
  )
    .addOption(organizationOption())
    .addOption(jsonOption())
    .action(exitWith(async (files: string[], o: UploadOptions) => (await load()).upload(files, o)));

  group
    .command('download')
    .description('every component into DIR, checked against its SHA-256')
    .argument('<id>', 'the asset')
    .option('-o, --output <dir>', 'where to write (default .)')
    .option('--force', 'overwrite existing files')
    .addOption(jsonOption())
    .action(exitWith(async (id: string, o: DownloadOptions) => (await load()).download(id, o)));

  group
    .command('show')
    .description('the asset and its components')
    .argument('<id>', 'the asset')
    .addOption(jsonOption())
    .action(exitWith(async (id: string, o: JsonOptions) => (await load()).show(id, o)));

  linkOptions(group.command('list').description('one page of assets, newest first'))
    .option('--kind <kind>', 'only this kind')
    .addOption(new Option('--state <state>', 'only pending or ready assets').choices([...ASSET_STATES]))
    .option('--name <name>', 'only assets of exactly this name')
    .option('--limit <n>', 'at most N', wholeNumber)
    .addOption(jsonOption())
    .action(exitWith(async (o: ListOptions) => (await load()).list(o)));
}
