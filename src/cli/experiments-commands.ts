// `assay experiments …`: list, show, create from a YAML file, and the state moves a researcher makes by hand.
import { parseDocument } from 'yaml';
import type { ExperimentData, ExperimentState } from '../client/resources/experiments.ts';
import { openClient, ORGANIZATION_OPTION } from './cli-client.ts';
import { dispatch, parseCommand, positiveInt, readTextFile, UsageError } from './command-args.ts';
import { printFields, printJson, printTable, type Column } from './output.ts';

const USAGE = `usage: assay experiments <command> [--json]

  list [--state STATE] [--query TEXT] [--limit N | --all] [--organization ID|SLUG|personal]
  show ID                      detail: variations, run counts, parents and children
  create --file FILE [--organization ID|SLUG|personal]
                               a draft from YAML: name (required), description, hypothesis, parent_ids
  commit ID                    draft → committed: variations freeze, runs become possible
  conclude ID                  committed → concluded
  retract ID --reason TEXT     committed | concluded → retracted
`;

const JSON_OPTION = { json: { type: 'boolean' } } as const;
const STATES = ['draft', 'committed', 'concluded', 'retracted'];
const FILE_KEYS = new Set(['name', 'description', 'hypothesis', 'parent_ids']);

export const EXPERIMENT_COLUMNS: Column<ExperimentData>[] = [
  ['ID', (e) => e.id],
  ['STATE', (e) => e.state],
  ['NAME', (e) => e.name],
  ['CREATED', (e) => e.created_at],
];

export function experimentsCommand(args: string[]): Promise<number> {
  return dispatch(
    USAGE,
    { list, show, create, commit: move('commit'), conclude: move('conclude'), retract },
    args,
  );
}

async function list(args: string[]): Promise<number> {
  const { values } = parseCommand(args, {
    ...JSON_OPTION,
    ...ORGANIZATION_OPTION,
    state: { type: 'string' },
    query: { type: 'string' },
    limit: { type: 'string' },
    all: { type: 'boolean' },
  });
  if (values.state !== undefined && !STATES.includes(values.state))
    throw new UsageError(`--state must be one of ${STATES.join(', ')}`);
  const { client, organizationId } = openClient(values.organization);
  const params = {
    state: values.state as ExperimentState | undefined,
    q: values.query,
    limit: positiveInt(values.limit, '--limit'),
    organizationId,
  };
  let items: ExperimentData[];
  let more = false;
  if (values.all) {
    items = [];
    for await (const e of client.experiments.iterate(params)) items.push(e);
  } else {
    const page = await client.experiments.list(params);
    items = page.items;
    more = page.next_cursor !== null;
  }
  if (values.json) printJson(items);
  else {
    printTable(items, EXPERIMENT_COLUMNS);
    if (more) process.stderr.write('(more: --all lists every page)\n');
  }
  return 0;
}

async function show(args: string[]): Promise<number> {
  const { values, positionals } = parseCommand(args, JSON_OPTION, { min: 1, max: 1 });
  const detail = await openClient().client.experiments.get(positionals[0]!);
  if (values.json) {
    printJson(detail);
    return 0;
  }
  const counts = detail.run_counts;
  printFields([
    ['id', detail.id],
    ['name', detail.name],
    ['state', detail.state],
    ['hypothesis', detail.hypothesis],
    ['description', detail.description],
    ['organization', detail.organization_id ?? 'personal'],
    ['created', detail.created_at],
    ['committed', detail.committed_at],
    [
      'runs',
      `${counts.pending} pending, ${counts.running} running, ${counts.succeeded} succeeded, ${counts.failed} failed`,
    ],
    ['parents', detail.parents.map((p) => `${p.name} (${p.id})`).join(', ')],
    ['children', detail.children.map((c) => `${c.name} (${c.id})`).join(', ')],
  ]);
  process.stdout.write('\n');
  printTable(detail.variations, [
    ['N', (v) => v.n],
    ['VARIATION', (v) => v.name],
    ['CREATED', (v) => v.created_at],
  ]);
  return 0;
}

async function create(args: string[]): Promise<number> {
  const { values } = parseCommand(args, {
    ...JSON_OPTION,
    ...ORGANIZATION_OPTION,
    file: { type: 'string', short: 'f' },
  });
  if (values.file === undefined)
    throw new UsageError('--file is required: a YAML file with name, description, hypothesis, parent_ids');
  const spec = parseExperimentFile(values.file, await readTextFile(values.file));
  const { client, organizationId } = openClient(values.organization);
  const experiment = await client.experiments.create({ ...spec, organizationId });
  if (values.json) printJson(experiment);
  else
    process.stdout.write(`created experiment ${experiment.id} (${experiment.state}): ${experiment.name}\n`);
  return 0;
}

function move(name: 'commit' | 'conclude') {
  return async (args: string[]): Promise<number> => {
    const { values, positionals } = parseCommand(args, JSON_OPTION, { min: 1, max: 1 });
    const experiment = await openClient().client.experiments[name](positionals[0]!);
    if (values.json) printJson(experiment);
    else process.stdout.write(`experiment ${experiment.id} is ${experiment.state}\n`);
    return 0;
  };
}

async function retract(args: string[]): Promise<number> {
  const { values, positionals } = parseCommand(
    args,
    { ...JSON_OPTION, reason: { type: 'string' } },
    { min: 1, max: 1 },
  );
  if (!values.reason) throw new UsageError('--reason is required');
  const experiment = await openClient().client.experiments.retract(positionals[0]!, values.reason);
  if (values.json) printJson(experiment);
  else process.stdout.write(`experiment ${experiment.id} is ${experiment.state}\n`);
  return 0;
}

/** The experiment YAML: a mapping of known keys only, so a typo is caught here rather than silently dropped. */
export function parseExperimentFile(file: string, source: string) {
  const doc = parseDocument(source);
  if (doc.errors.length > 0)
    throw new UsageError(`${file}: invalid YAML: ${doc.errors[0]!.message.split('\n')[0]}`);
  const value: unknown = doc.toJS();
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new UsageError(`${file}: expected a mapping with at least a name`);
  const spec = value as Record<string, unknown>;
  const unknown = Object.keys(spec).filter((k) => !FILE_KEYS.has(k));
  if (unknown.length > 0)
    throw new UsageError(
      `${file}: unknown key(s) ${unknown.join(', ')} (known: ${[...FILE_KEYS].join(', ')})`,
    );
  const str = (key: string) => {
    if (spec[key] === undefined || spec[key] === null) return undefined;
    if (typeof spec[key] !== 'string') throw new UsageError(`${file}: ${key} must be text`);
    return spec[key];
  };
  const name = str('name');
  if (!name) throw new UsageError(`${file}: name is required`);
  const parents = spec.parent_ids ?? [];
  if (!Array.isArray(parents) || !parents.every((p) => typeof p === 'string'))
    throw new UsageError(`${file}: parent_ids must be a list of experiment ids`);
  return {
    name,
    description: str('description'),
    hypothesis: str('hypothesis'),
    parentIds: parents.length > 0 ? (parents as string[]) : undefined,
  };
}
