// `assay assets …`: upload files as one asset (crash-safe uploader), download one, show and list.
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { access, mkdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { AssetData } from '../client/resources/assets.ts';
import { openClient, ORGANIZATION_OPTION } from './cli-client.ts';
import { dispatch, parseCommand, positiveInt, UsageError } from './command-args.ts';
import { componentName, contentTypeOf } from './content-type.ts';
import { formatBytes, printFields, printJson, printTable } from './output.ts';
import { describeProgress, ProgressLine } from './upload-progress.ts';

const USAGE = `usage: assay assets <command> [--json]

  upload FILE… --kind KIND [--name NAME] [--experiment ID [--variation N --run R]] [--organization …]
                               one asset with a component per file (KIND: report, document, paper,
                               output, checkpoint, …; report, document and paper are indexed for search)
  download ID [--output DIR] [--force]
                               every component into DIR (default .), checked against its SHA-256
  show ID
  list [--experiment ID [--variation N --run R]] [--kind KIND] [--state pending|ready] [--limit N]
`;

const JSON_OPTION = { json: { type: 'boolean' } } as const;
const LINK_OPTIONS = {
  experiment: { type: 'string' },
  variation: { type: 'string' },
  run: { type: 'string' },
} as const;

export function assetsCommand(args: string[]): Promise<number> {
  return dispatch(USAGE, { upload, download, show, list }, args);
}

/** `--experiment` alone links to the experiment; with `--variation` and `--run`, to one run. */
function links(values: { experiment?: string; variation?: string; run?: string }) {
  const n = positiveInt(values.variation, '--variation');
  const r = positiveInt(values.run, '--run');
  if ((n === undefined) !== (r === undefined) || (n !== undefined && values.experiment === undefined)) {
    throw new UsageError('a run is named by --experiment, --variation and --run together');
  }
  return {
    experimentId: values.experiment,
    run: n !== undefined && r !== undefined ? { experimentId: values.experiment!, n, r } : undefined,
  };
}

async function upload(args: string[]): Promise<number> {
  const { values, positionals } = parseCommand(
    args,
    {
      ...JSON_OPTION,
      ...ORGANIZATION_OPTION,
      ...LINK_OPTIONS,
      kind: { type: 'string' },
      name: { type: 'string' },
    },
    { min: 1, max: 1000 },
  );
  if (values.kind === undefined)
    throw new UsageError('--kind is required (report, document, paper, output, checkpoint, …)');
  const { experimentId, run } = links(values);
  const { client, organizationId } = openClient(values.organization);
  try {
    const files = positionals.map((file) => ({
      path: file,
      name: componentName(path.basename(file)),
      contentType: contentTypeOf(file),
    }));
    const handle = client.uploadAsync({
      kind: values.kind,
      name: values.name ?? path.basename(positionals[0]!),
      experimentId: run ? undefined : experimentId,
      run,
      organizationId,
      files,
    });
    const progress = new ProgressLine();
    const timer = progress.enabled
      ? setInterval(() => progress.update(`uploading ${describeProgress(handle.progress())}`), 200)
      : undefined;
    let asset: AssetData;
    try {
      asset = await handle.done;
    } finally {
      clearInterval(timer);
      progress.done();
    }
    if (values.json) printJson(asset);
    else
      process.stdout.write(
        `uploaded asset ${asset.id} (${asset.kind}, ${formatBytes(totalSize(asset))}, ${asset.state})\n`,
      );
    return 0;
  } finally {
    client.close();
  }
}

async function download(args: string[]): Promise<number> {
  const { values, positionals } = parseCommand(
    args,
    { ...JSON_OPTION, output: { type: 'string', short: 'o' }, force: { type: 'boolean' } },
    { min: 1, max: 1 },
  );
  const dir = path.resolve(values.output ?? '.');
  const { components } = await openClient().client.assets.download(positionals[0]!);
  const written: Array<{ name: string; path: string; size: number }> = [];
  for (const [name, c] of Object.entries(components)) {
    const target = path.resolve(dir, name);
    // Component names are checked by the server; this keeps a bad one from writing outside DIR anyway.
    if (!target.startsWith(dir + path.sep))
      throw new Error(`component name ${JSON.stringify(name)} points outside ${dir}`);
    if (
      !values.force &&
      (await access(target).then(
        () => true,
        () => false,
      ))
    )
      throw new UsageError(`${target} exists (--force overwrites)`);
    await fetchTo(c.url, c.headers, target, c.sha256);
    written.push({ name, path: target, size: c.size });
  }
  if (values.json) printJson({ asset_id: positionals[0], files: written });
  else for (const w of written) process.stdout.write(`${w.path} (${formatBytes(w.size)})\n`);
  return 0;
}

// Into a temporary file renamed at the end: an interrupted download never looks like a complete one.
async function fetchTo(
  url: string,
  headers: Record<string, string>,
  target: string,
  sha256: string | null,
): Promise<void> {
  const response = await fetch(url, { headers });
  if (!response.ok || response.body === null)
    throw new Error(`download of ${path.basename(target)} failed: HTTP ${response.status}`);
  await mkdir(path.dirname(target), { recursive: true });
  const temp = `${target}.${process.pid}.part`;
  const hash = createHash('sha256');
  const tap = new Transform({
    transform: (chunk: Buffer, _enc, done) => (hash.update(chunk), done(null, chunk)),
  });
  try {
    await pipeline(Readable.fromWeb(response.body), tap, createWriteStream(temp));
    const digest = hash.digest('hex');
    if (sha256 !== null && digest !== sha256.toLowerCase())
      throw new Error(`${path.basename(target)}: SHA-256 ${digest} is not the recorded ${sha256}`);
    await rename(temp, target);
  } finally {
    await rm(temp, { force: true });
  }
}

async function show(args: string[]): Promise<number> {
  const { values, positionals } = parseCommand(args, JSON_OPTION, { min: 1, max: 1 });
  const asset = await openClient().client.assets.get(positionals[0]!);
  if (values.json) {
    printJson(asset);
    return 0;
  }
  printFields([
    ['id', asset.id],
    ['kind', asset.kind],
    ['name', asset.name],
    ['state', asset.state],
    ['size', formatBytes(totalSize(asset))],
    ['experiment', asset.experiment_id],
    ['run', asset.run_id],
    ['created', asset.created_at],
    ['finalized', asset.finalized_at],
    ['metadata', Object.keys(asset.metadata).length > 0 ? asset.metadata : undefined],
  ]);
  process.stdout.write('\n');
  printTable(Object.entries(asset.components), [
    ['COMPONENT', ([name]) => name],
    ['SIZE', ([, c]) => formatBytes(c.size)],
    ['TYPE', ([, c]) => c.content_type],
    ['SHA256', ([, c]) => c.sha256],
  ]);
  return 0;
}

async function list(args: string[]): Promise<number> {
  const { values } = parseCommand(args, {
    ...JSON_OPTION,
    ...LINK_OPTIONS,
    kind: { type: 'string' },
    state: { type: 'string' },
    limit: { type: 'string' },
  });
  if (values.state !== undefined && values.state !== 'pending' && values.state !== 'ready')
    throw new UsageError('--state must be pending or ready');
  const { experimentId, run } = links(values);
  const page = await openClient().client.assets.list({
    experimentId,
    run,
    kind: values.kind,
    state: values.state,
    limit: positiveInt(values.limit, '--limit'),
  });
  if (values.json) {
    printJson(page.items);
    return 0;
  }
  printTable(page.items, [
    ['ID', (a) => a.id],
    ['KIND', (a) => a.kind],
    ['STATE', (a) => a.state],
    ['SIZE', (a) => formatBytes(totalSize(a))],
    ['NAME', (a) => a.name],
    ['CREATED', (a) => a.created_at],
  ]);
  return 0;
}

function totalSize(asset: AssetData): number {
  return Object.values(asset.components).reduce((sum, c) => sum + c.size, 0);
}
