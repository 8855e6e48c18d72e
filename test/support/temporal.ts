import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePorts } from './free-port.ts';
import { spawnProcessGroup } from './process-group.ts';
import { acceptsTcp, waitUntilReady } from './readiness.ts';
import { resolveTool } from './tool-paths.ts';
import { SEARCH_ATTRIBUTE_DEFINITIONS } from '../../workflows/definitions.ts';

export type TemporalDevServer = {
  /** host:port of the frontend gRPC service, as Temporal clients and workers take it. */
  address: string;
  /** Set only when started with `ui: true`. */
  uiUrl: string | undefined;
  namespace: string;
  /** Leader of the server's process group. */
  pid: number;
  /** Its ports (gRPC, HTTP, metrics[, UI]) and state file's folder: a restart on them finds its history. */
  ports: number[];
  stateDir: string;
  stop(): Promise<void>;
};

const host = '127.0.0.1';
const namespace = 'default';

/**
 * Starts `temporal server start-dev` with its state in a temp file. The history, matching and worker
 * services still take random free ports of their own choosing: the CLI has no flags for them.
 */
export async function startTemporalDevServer({
  ui = false,
  restartOf,
}: {
  ui?: boolean;
  /** A server that was killed: the new one takes its ports and state file (the caller removes the folder). */
  restartOf?: Pick<TemporalDevServer, 'ports' | 'stateDir'>;
} = {}): Promise<TemporalDevServer> {
  const dir = restartOf?.stateDir ?? (await mkdtemp(join(tmpdir(), 'assay-temporal-')));
  const ports = restartOf?.ports ?? (await freePorts(ui ? 4 : 3));
  const [grpc, http, metrics, uiPort] = ports;
  const args = [
    'server',
    'start-dev',
    '--ip',
    host,
    '--port',
    String(grpc),
    '--http-port',
    String(http),
    '--metrics-port',
    String(metrics),
    '--db-filename',
    join(dir, 'temporal.db'),
    '--log-level',
    'warn',
    // The UI port otherwise defaults to gRPC port + 1000; the newsfeed would reach for the internet.
    ...(ui ? ['--ui-port', String(uiPort), '--ui-disable-news-fetch'] : ['--headless']),
    // Assay's search attributes, as `assay server`'s embedded dev server registers them.
    ...SEARCH_ATTRIBUTE_DEFINITIONS.flatMap((d) => ['--search-attribute', d]),
  ];
  // The CLI reads TEMPORAL_* client settings from the environment; a developer's must not leak in.
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('TEMPORAL_')));
  const server = spawnProcessGroup(resolveTool('temporal'), args, {
    name: 'temporal server start-dev',
    cwd: dir,
    env,
    cleanupPaths: restartOf ? [] : [dir],
    // Its state file is thrown away, so the 1-2 s graceful shutdown buys nothing.
    stopGraceMs: 0,
  });
  // An accepted connection proves only the listener; the HTTP API describing the namespace proves it
  // is served.
  await waitUntilReady(server, async () => {
    if (!(await acceptsTcp(host, grpc))) return false;
    const response = await fetch(`http://${host}:${http}/api/v1/namespaces/${namespace}`, {
      signal: AbortSignal.timeout(2_000),
    });
    await response.body?.cancel();
    return response.ok;
  });
  return {
    address: `${host}:${grpc}`,
    uiUrl: ui ? `http://${host}:${uiPort}` : undefined,
    namespace,
    pid: server.pid,
    ports,
    stateDir: dir,
    stop: server.stop,
  };
}
