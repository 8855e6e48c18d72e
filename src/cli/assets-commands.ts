// `assay assets …`: upload files as one asset (crash-safe uploader), download one, show and list.
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { access, mkdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { AssetData } from '../client/index.ts';
import { formatBytes } from '../client/format-bytes.ts';
import { openClient } from './cli-client.ts';
import { UsageError } from './command-args.ts';
import { componentName, contentTypeOf } from './content-type.ts';
import { printFields, printJson, printTable } from './output.ts';
import type { JsonOptions } from './program/shared-options.ts';
import { describeProgress, ProgressLine } from './upload-progress.ts';

interface LinkOptions {
  experiment?: string;
  variation?: number;
  run?: number;
}

export interface UploadOptions extends JsonOptions, LinkOptions {
  kind: string;
  name?: string;
  organization?: string;
}

export interface DownloadOptions extends JsonOptions {
  output?: string;
  force?: boolean;
}

export interface ListOptions extends JsonOptions, LinkOptions {
  kind?: string;
  state?: 'pending' | 'ready';
  name?: string;
  limit?: number;
}

/** `--experiment` alone links to the experiment; with `--variation` and `--run`, to one run. */
function links(values: LinkOptions) {
  const { variation: n, run: r } = values;
  if ((n === undefined) !== (r === undefined) || (n !== undefined && values.experiment === undefined)) {
    throw new UsageError('a run is named by --experiment, --variation and --run together');
  }
  return {
    experimentId: values.experiment,
    run: n !== undefined && r !== undefined ? { experimentId: values.experiment!, n, r } : undefined,
  };
}

export async function upload(paths: string[], values: UploadOptions): Promise<number> {
  const { experimentId, run } = links(values);
  const { client, organizationId } = openClient(values.organization);
  try {
    const files = paths.map((file) => ({
      path: file,
      name: componentName(path.basename(file)),
      contentType: contentTypeOf(file),
    }));
    const handle = client.uploadAsync({
      kind: values.kind,
      name: values.name ?? path.basename(paths[0]!),
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

export async function download(id: string, values: DownloadOptions): Promise<number> {
  const dir = path.resolve(values.output ?? '.');
  const { components } = await openClient().client.assets.download(id);
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
  if (values.json) printJson({ asset_id: id, files: written });
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

export async function show(id: string, values: JsonOptions): Promise<number> {
  const asset = await openClient().client.assets.get(id);
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

export async function list(values: ListOptions): Promise<number> {
  const { experimentId, run } = links(values);
  const page = await openClient().client.assets.list({
    experimentId,
    run,
    kind: values.kind,
    state: values.state,
    name: values.name,
    limit: values.limit,
  });
  if (values.json) {
    printJson(page.items);
    return 0;
  }
  // Unlike experiments and search, the assets list is not narrowed by the scope: it says so.
  process.stderr.write(
    experimentId
      ? `assets of experiment ${experimentId}\n`
      : 'assets in every scope you can see (the configured organization does not narrow this list; --experiment does)\n',
  );
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
