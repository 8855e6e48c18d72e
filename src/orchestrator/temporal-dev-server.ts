// The embedded default's Temporal: `temporal server start-dev` as a child process, its state in the data
// directory so workflows survive a restart of `assay server`.
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { SEARCH_ATTRIBUTE_DEFINITIONS } from '../../workflows/definitions.ts';

export interface DevServer {
  address: string;
  uiUrl: string;
  /** False when this data dir's dev server from an earlier start was still serving and is reused. */
  owned: boolean;
  /** Set when the configured port was taken by another Temporal (or anything else): the port asked for. */
  movedFrom: number | undefined;
  stop(): Promise<void>;
}

/** What a started dev server leaves in its data dir, so that a later start of the same dir can find it. */
interface DevServerRecord {
  pid: number;
  port: number;
  uiPort: number;
}

const recordFile = (dataDir: string) => path.join(dataDir, 'dev-server.json');

async function readRecord(dataDir: string): Promise<DevServerRecord | undefined> {
  try {
    return JSON.parse(await readFile(recordFile(dataDir), 'utf8')) as DevServerRecord;
  } catch {
    return undefined;
  }
}

/**
 * The recorded process still runs this data dir's database. Where /proc tells (Linux), its command line must
 * name the database file: a pid reused by anything else, next to another deployment's Temporal on the
 * recorded port, must not make this start join that one.
 */
async function stillOurs(pid: number, dbFile: string): Promise<boolean> {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => undefined);
  return cmdline === undefined || cmdline.split('\0').includes(dbFile);
}

/** A port nothing listens on now (the kernel's pick); the dev server binds it a moment later. */
function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, host, () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

const repoVenvBin = path.resolve(import.meta.dirname, '../../.venv/bin');

/** TEMPORAL_CLI_PATH, then PATH, then the project's venv (scripts/setup-temporal.sh installs it there). */
export function findTemporalCli(
  configured: string | undefined,
  envPath = process.env.PATH ?? '',
): string | undefined {
  const candidates = configured
    ? [configured]
    : [
        ...envPath
          .split(path.delimiter)
          .filter(Boolean)
          .map((d) => path.join(d, 'temporal')),
        path.join(repoVenvBin, 'temporal'),
      ];
  return candidates.find((file) => {
    try {
      accessSync(file, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

function listening(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const settle = (answer: boolean) => {
      socket.destroy();
      resolve(answer);
    };
    socket.setTimeout(1000);
    socket.once('connect', () => settle(true));
    socket.once('error', () => settle(false));
    socket.once('timeout', () => settle(false));
  });
}

/** Ready means the frontend answers for the namespace, not merely that the port accepts connections. */
async function serves(address: string, namespace: string): Promise<boolean> {
  const connection = await Connection.connect({ address, connectTimeout: 1000 }).catch(() => undefined);
  if (!connection) return false;
  try {
    await connection.workflowService.describeNamespace({ namespace });
    return true;
  } catch {
    return false;
  } finally {
    await connection.close();
  }
}

/**
 * Starts the data dir's dev server, or finds the one an earlier start of the same data dir left serving. A
 * port taken by anything else (another deployment's Temporal above all) is never joined: this one moves to
 * a free port and says so (`movedFrom`); sharing a Temporal is the operator's choice (TEMPORAL_ADDRESS).
 */
export async function startDevServer(options: {
  cli: string;
  dataDir: string;
  port: number;
  uiPort: number;
  namespace: string;
  timeoutMs?: number;
}): Promise<DevServer> {
  const host = '127.0.0.1';
  const earlier = await readRecord(options.dataDir);
  const dbFile = path.join(options.dataDir, 'temporal.db');
  if (
    earlier &&
    (await stillOurs(earlier.pid, dbFile)) &&
    (await serves(`${host}:${earlier.port}`, options.namespace))
  )
    return {
      address: `${host}:${earlier.port}`,
      uiUrl: `http://${host}:${earlier.uiPort}`,
      owned: false,
      movedFrom: undefined,
      stop: async () => undefined,
    };
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  // The CLI picks its internal services' ports itself (free a moment before it binds them), so a busy machine
  // can make it lose one to another process and panic before it serves: a new try then picks again.
  for (let attempt = 1; ; attempt++) {
    try {
      return await launch(options, host, dbFile, deadline);
    } catch (error) {
      if (!(error instanceof EarlyExit) || attempt === 3 || Date.now() >= deadline) throw error;
    }
  }
}

class EarlyExit extends Error {}

/** What explains a failed start: the panic or error lines of its output (the tail is a Go stack trace). */
function explain(stderr: string): string {
  const lines = stderr.split('\n').map((line) => line.trim());
  const telling = lines.filter((line) => /panic|error|fatal|address already in use/i.test(line)).slice(0, 4);
  return (telling.length > 0 ? telling.join(' | ') : stderr.trim().slice(-500)).slice(0, 1000);
}

async function launch(
  options: Parameters<typeof startDevServer>[0],
  host: string,
  dbFile: string,
  deadline: number,
): Promise<DevServer> {
  const taken = await listening(host, options.port);
  const port = taken ? await freePort(host) : options.port;
  const uiPort = taken || (await listening(host, options.uiPort)) ? await freePort(host) : options.uiPort;
  const address = `${host}:${port}`;
  const uiUrl = `http://${host}:${uiPort}`;
  const movedFrom = taken ? options.port : undefined;
  await mkdir(options.dataDir, { recursive: true });
  const args = [
    'server',
    'start-dev',
    '--ip',
    host,
    '--port',
    String(port),
    '--ui-port',
    String(uiPort),
    '--ui-disable-news-fetch',
    '--db-filename',
    dbFile,
    '--namespace',
    options.namespace,
    '--log-level',
    'warn',
    // Filters of the Temporal UI by experiment, sweep, variation, run and owner (workflows/definitions.ts).
    ...SEARCH_ATTRIBUTE_DEFINITIONS.flatMap((d) => ['--search-attribute', d]),
  ];
  // Its own TEMPORAL_* client settings would otherwise be read from ours.
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('TEMPORAL_')));
  const child: ChildProcess = spawn(options.cli, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    if (stderr.length < 64_000) stderr += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const stop = async () => {
    await rm(recordFile(options.dataDir), { force: true });
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  };
  while (Date.now() < deadline) {
    if (child.exitCode !== null)
      throw new EarlyExit(`temporal server start-dev exited (${child.exitCode}): ${explain(stderr)}`);
    if (await serves(address, options.namespace)) {
      const record: DevServerRecord = { pid: child.pid!, port, uiPort };
      await writeFile(recordFile(options.dataDir), JSON.stringify(record));
      return { address, uiUrl, owned: true, movedFrom, stop };
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  await stop();
  throw new Error(
    `temporal server start-dev did not become ready within ${(options.timeoutMs ?? 60_000) / 1000} s`,
  );
}
