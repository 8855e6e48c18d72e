// The embedded default's Temporal: `temporal server start-dev` as a child process, its state in the data
// directory so workflows survive a restart of `assay server`.
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { SEARCH_ATTRIBUTE_DEFINITIONS } from '../../workflows/definitions.ts';

export interface DevServer {
  address: string;
  uiUrl: string;
  /** False when a dev server from an earlier start was still serving and is reused. */
  owned: boolean;
  stop(): Promise<void>;
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

export async function startDevServer(options: {
  cli: string;
  dataDir: string;
  port: number;
  uiPort: number;
  namespace: string;
  timeoutMs?: number;
}): Promise<DevServer> {
  const host = '127.0.0.1';
  const address = `${host}:${options.port}`;
  const uiUrl = `http://${host}:${options.uiPort}`;
  if (await listening(host, options.port)) {
    if (await serves(address, options.namespace))
      return { address, uiUrl, owned: false, stop: async () => undefined };
    throw new Error(
      `port ${options.port} is taken by something that is not a Temporal server (set ASSAY_TEMPORAL_PORT)`,
    );
  }
  await mkdir(options.dataDir, { recursive: true });
  const args = [
    'server',
    'start-dev',
    '--ip',
    host,
    '--port',
    String(options.port),
    '--ui-port',
    String(options.uiPort),
    '--ui-disable-news-fetch',
    '--db-filename',
    path.join(options.dataDir, 'temporal.db'),
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
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  };
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  while (Date.now() < deadline) {
    if (child.exitCode !== null)
      throw new Error(`temporal server start-dev exited (${child.exitCode}): ${stderr.trim().slice(-500)}`);
    if (await serves(address, options.namespace)) return { address, uiUrl, owned: true, stop };
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  await stop();
  throw new Error(
    `temporal server start-dev did not become ready within ${(options.timeoutMs ?? 60_000) / 1000} s`,
  );
}
