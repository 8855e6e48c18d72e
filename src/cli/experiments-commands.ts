// `assay experiments …`: list, show, create (from flags or a YAML file), and the state moves a researcher
// makes by hand.
import { parseDocument } from 'yaml';
import type { ExperimentData, ExperimentState } from '../client/index.ts';
import { openClient } from './cli-client.ts';
import { scopeName } from './scope-text.ts';
import { readTextFile, UsageError } from './command-args.ts';
import { printFields, printJson, printTable, type Column } from './output.ts';
import type { JsonOptions } from './program/shared-options.ts';

const FILE_KEYS = new Set(['name', 'description', 'hypothesis', 'parent_ids', 'tags']);

export interface ListOptions extends JsonOptions {
  state?: ExperimentState;
  query?: string;
  tag?: string[];
  limit?: number;
  all?: boolean;
  organization?: string;
}

export interface CreateOptions extends JsonOptions {
  file?: string;
  name?: string;
  hypothesis?: string;
  description?: string;
  parent?: string[];
  tag?: string[];
  organization?: string;
}

export interface RetractOptions extends JsonOptions {
  reason: string;
}

export const EXPERIMENT_COLUMNS: Column<ExperimentData>[] = [
  ['ID', (e) => e.id],
  ['STATE', (e) => e.state],
  ['NAME', (e) => e.name],
  ['CREATED', (e) => e.created_at],
];

export async function list(values: ListOptions): Promise<number> {
  const { client, organizationId } = openClient(values.organization);
  const params = {
    state: values.state,
    q: values.query,
    tags: values.tag,
    limit: values.limit,
    organizationId,
  };
  // Page by page here rather than through iterate(): each page names the scope listed.
  const items: ExperimentData[] = [];
  let page = await client.experiments.list(params);
  items.push(...page.items);
  while (values.all && page.next_cursor !== null) {
    page = await client.experiments.list({ ...params, cursor: page.next_cursor });
    items.push(...page.items);
  }
  const more = page.next_cursor !== null;
  // On stderr, so that stdout stays the table or the JSON alone.
  process.stderr.write(`experiments in ${scopeName(page.scope)}\n`);
  if (values.json) printJson(items);
  else {
    // The TAGS column when any experiment listed has one: most lists stay as narrow as before.
    const tagged = items.some((e) => e.tags.length > 0);
    printTable(
      items,
      tagged ? [...EXPERIMENT_COLUMNS, ['TAGS', (e) => e.tags.join(',')]] : EXPERIMENT_COLUMNS,
    );
    if (more) process.stderr.write('(more: --all lists every page)\n');
  }
  return 0;
}

export async function show(id: string, values: JsonOptions): Promise<number> {
  const detail = await openClient().client.experiments.get(id);
  if (values.json) {
    printJson(detail);
    return 0;
  }
  const counts = detail.run_counts;
  printFields([
    ['id', detail.id],
    ['name', detail.name],
    ['state', detail.state],
    ['tags', detail.tags.join(', ')],
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

export async function create(values: CreateOptions): Promise<number> {
  const fromFile =
    values.file === undefined ? {} : parseExperimentFile(values.file, await readTextFile(values.file));
  const spec = {
    ...fromFile,
    ...defined({
      name: values.name,
      hypothesis: values.hypothesis,
      description: values.description,
      parentIds: values.parent,
      tags: values.tag,
    }),
  };
  if (!spec.name) throw new UsageError('a name is required: --name NAME, or name: in the --file YAML');
  const { client, organizationId } = openClient(values.organization);
  const experiment = await client.experiments.create({ ...spec, name: spec.name, organizationId });
  if (values.json) printJson(experiment);
  else
    process.stdout.write(`created experiment ${experiment.id} (${experiment.state}): ${experiment.name}\n`);
  return 0;
}

/** The fields given, so a flag not given leaves the file's value in place. */
function defined<T extends object>(fields: T): Partial<T> {
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)) as Partial<T>;
}

export async function move(name: 'commit' | 'conclude', id: string, values: JsonOptions): Promise<number> {
  const experiment = await openClient().client.experiments[name](id);
  if (values.json) printJson(experiment);
  else process.stdout.write(`experiment ${experiment.id} is ${experiment.state}\n`);
  return 0;
}

export async function retract(id: string, values: RetractOptions): Promise<number> {
  if (!values.reason.trim()) throw new UsageError('--reason must say why');
  const experiment = await openClient().client.experiments.retract(id, values.reason);
  if (values.json) printJson(experiment);
  else process.stdout.write(`experiment ${experiment.id} is ${experiment.state}\n`);
  return 0;
}

/**
 * The experiment YAML: a mapping of known keys only, so a typo is caught here rather than silently dropped.
 */
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
  const parents = spec.parent_ids ?? [];
  if (!Array.isArray(parents) || !parents.every((p) => typeof p === 'string'))
    throw new UsageError(`${file}: parent_ids must be a list of experiment ids`);
  const tags = spec.tags ?? [];
  if (!Array.isArray(tags) || !tags.every((t) => typeof t === 'string'))
    throw new UsageError(`${file}: tags must be a list of text`);
  return {
    name,
    description: str('description'),
    hypothesis: str('hypothesis'),
    parentIds: parents.length > 0 ? (parents as string[]) : undefined,
    tags: tags.length > 0 ? (tags as string[]) : undefined,
  };
}
