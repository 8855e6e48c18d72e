// `assay variations …`: the configs of an experiment; created from a YAML file sent as written.
import type { VariationData } from '../client/resources/variations.ts';
import { openClient } from './cli-client.ts';
import { dispatch, parseCommand, positiveInt, readTextFile, UsageError } from './command-args.ts';
import { printFields, printJson, printTable } from './output.ts';

const USAGE = `usage: assay variations <command> [--json]

  list EXPERIMENT
  show EXPERIMENT N            the variation with its YAML and the split-out launch and accelerate blocks
  create EXPERIMENT --file FILE [--name NAME]
                               from a YAML config (draft experiments only); top-level launch: and
                               accelerate: blocks are split out by the server
`;

const JSON_OPTION = { json: { type: 'boolean' } } as const;

export function variationsCommand(args: string[]): Promise<number> {
  return dispatch(USAGE, { list, show, create }, args);
}

async function list(args: string[]): Promise<number> {
  const { values, positionals } = parseCommand(args, JSON_OPTION, { min: 1, max: 1 });
  const items = await openClient().client.variations.list(positionals[0]!);
  if (values.json) {
    printJson(items);
    return 0;
  }
  printTable(items, [
    ['N', (v) => v.n],
    ['NAME', (v) => v.name],
    ['CONFIG', (v) => v.config_json],
    ['CREATED', (v) => v.created_at],
  ]);
  return 0;
}

async function show(args: string[]): Promise<number> {
  const { values, positionals } = parseCommand(args, JSON_OPTION, { min: 2, max: 2 });
  const variation = await openClient().client.variations.get(
    positionals[0]!,
    positiveInt(positionals[1], 'N')!,
  );
  if (values.json) {
    printJson(variation);
    return 0;
  }
  printVariation(variation);
  return 0;
}

async function create(args: string[]): Promise<number> {
  const { values, positionals } = parseCommand(
    args,
    { ...JSON_OPTION, file: { type: 'string', short: 'f' }, name: { type: 'string' } },
    { min: 1, max: 1 },
  );
  if (values.file === undefined) throw new UsageError('--file is required: the variation config as YAML');
  const configYaml = await readTextFile(values.file);
  // The server parses it and answers 400 naming the line and column of a YAML error.
  const variation = await openClient().client.variations.create(positionals[0]!, {
    configYaml,
    name: values.name,
  });
  if (values.json) printJson(variation);
  else process.stdout.write(`created variation ${variation.n} of experiment ${variation.experiment_id}\n`);
  return 0;
}

function printVariation(v: VariationData): void {
  printFields([
    ['experiment', v.experiment_id],
    ['n', v.n],
    ['name', v.name],
    ['created', v.created_at],
    ['launch', Object.keys(v.launch_config).length > 0 ? v.launch_config : undefined],
    ['accelerate', Object.keys(v.accelerate_config_json).length > 0 ? v.accelerate_config_json : undefined],
  ]);
  process.stdout.write(`\n${v.config_yaml.endsWith('\n') ? v.config_yaml : `${v.config_yaml}\n`}`);
}
