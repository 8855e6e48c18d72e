// `assay runs list` and `assay runs update`: runs by state and tag, and their names, tags, notes and archiving.
import type { RunData, RunState, UpdateRunParams } from '../client/index.ts';
import { openClient } from './cli-client.ts';
import { readTextFile, UsageError } from './command-args.ts';
import { printJson, printTable, type Column } from './output.ts';
import type { JsonOptions } from './program/shared-options.ts';
import { queuedText } from './runs-commands.ts';

export interface ListRunsOptions extends JsonOptions {
  tag?: string[];
  state?: RunState;
  archived?: boolean;
  limit?: number;
  all?: boolean;
}

export interface UpdateRunOptions extends JsonOptions {
  /** A name, or false for --no-name; commander leaves it true when neither was given. */
  name?: string | boolean;
  tag?: string[];
  clearTags?: boolean;
  notes?: string;
  notesFile?: string;
  archive?: boolean;
  unarchive?: boolean;
}

const COLUMNS: Column<RunData>[] = [
  ['R', (r) => r.r],
  ['NAME', (r) => r.name],
  ['TAGS', (r) => r.tags.join(',')],
  ['STATE', (r) => r.state],
  ['QUEUE', (r) => (r.queue ? queuedText(r.queue) : undefined)],
  ['FAILURE', (r) => r.failure_reason],
  ['STARTED', (r) => r.started_at],
  ['ENDED', (r) => r.ended_at],
  ['MESSAGE', (r) => r.failure_message],
];

/** Variation N's runs in run order; without N, a page (or --all) of every variation's, newest first. */
export async function list(
  experimentId: string,
  n: number | undefined,
  values: ListRunsOptions,
): Promise<number> {
  const { client } = openClient();
  const filter = { state: values.state, tags: values.tag, archived: values.archived };
  if (n !== undefined) {
    if (values.limit !== undefined || values.all) throw new UsageError('--limit and --all go without N');
    const runs = await client.runs.list(experimentId, n, filter);
    if (values.json) printJson(runs);
    else printTable(runs, COLUMNS);
    return 0;
  }
  const items: RunData[] = [];
  let cursor: string | undefined;
  let more = false;
  do {
    const page = await client.runs.listForExperiment(experimentId, {
      ...filter,
      limit: values.limit,
      cursor,
    });
    items.push(...page.items);
    cursor = page.next_cursor ?? undefined;
    more = cursor !== undefined;
  } while (values.all && cursor);
  if (values.json) printJson(items);
  else {
    printTable(items, [['N', (r) => r.n], ...COLUMNS]);
    if (more) process.stderr.write('(more: --all lists every page)\n');
  }
  return 0;
}

export async function update(
  experimentId: string,
  n: number,
  r: number,
  values: UpdateRunOptions,
): Promise<number> {
  const changes: UpdateRunParams = {};
  if (typeof values.name === 'string') changes.name = values.name;
  else if (values.name === false) changes.name = null;
  if (values.tag) changes.tags = values.tag;
  else if (values.clearTags) changes.tags = [];
  if (values.notes !== undefined) changes.notes = values.notes;
  else if (values.notesFile !== undefined) changes.notes = await readTextFile(values.notesFile);
  if (values.archive) changes.archived = true;
  else if (values.unarchive) changes.archived = false;
  if (Object.keys(changes).length === 0)
    throw new UsageError(
      'nothing to change: give --name, --no-name, --tag, --clear-tags, --notes, --notes-file, --archive or --unarchive',
    );
  const run = await openClient().client.runs.update(experimentId, n, r, changes);
  if (values.json) printJson(run);
  else
    process.stdout.write(
      `run ${run.r} of variation ${run.n}: ${run.name ?? '(no name)'}` +
        `${run.tags.length > 0 ? ` [${run.tags.join(', ')}]` : ''}${run.archived_at ? ' (archived)' : ''}\n`,
    );
  return 0;
}
