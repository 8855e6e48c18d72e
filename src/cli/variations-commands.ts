// `assay variations …`: the configs of an experiment; created from a YAML file sent as written.
import type { VariationData } from '../client/index.ts';
import { openClient } from './cli-client.ts';
import { readTextFile } from './command-args.ts';
import { printFields, printJson, printTable } from './output.ts';
import type { JsonOptions } from './program/shared-options.ts';

export interface CreateOptions extends JsonOptions {
  file: string;
  name?: string;
}

export async function list(experimentId: string, values: JsonOptions): Promise<number> {
  const items = await openClient().client.variations.list(experimentId);
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

export async function show(experimentId: string, n: number, values: JsonOptions): Promise<number> {
  const variation = await openClient().client.variations.get(experimentId, n);
  if (values.json) {
    printJson(variation);
    return 0;
  }
  printVariation(variation);
  return 0;
}

export async function create(experimentId: string, values: CreateOptions): Promise<number> {
  const configYaml = await readTextFile(values.file);
  // The server parses it and answers 400 naming the line and column of a YAML error.
  const variation = await openClient().client.variations.create(experimentId, {
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
