// The search worker (search-worker/: the Python sampler of random, sobol and tpe sweeps) as a child process
// of `assay server`: started beside the in-process worker, restarted with backoff when it dies, its output in
// the service log, stopped with the service.
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, existsSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { searchTaskQueue } from '../../workflows/sweep-types.ts';

interface Log {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface SearchWorkerOptions {
  python: string;
  /** The directory holding the `assay_search_worker` package (put on PYTHONPATH). */
  packageDir: string;
  address: string;
  namespace: string;
  /** The deployment's search queue, `searchTaskQueue(deployment queue)`. */
  taskQueue: string;
  log: Log;
  /** Delays before each restart in a row (the last repeats). */
  restartDelaysMs?: readonly number[];
  /** A run at least this long counts as healthy: the next restart starts from the first delay again. */
  healthyAfterMs?: number;
  /** How long a stop waits after SIGTERM before SIGKILL. */
  stopGraceMs?: number;
}

export interface SearchWorkerProcess {
  /** The running child's pid; undefined between a death and its restart. */
  pid(): number | undefined;
  stop(): Promise<void>;
}

const DEFAULT_DELAYS_MS = [1_000, 2_000, 5_000, 10_000, 30_000, 60_000];
const SOURCE_CANDIDATES = ['../..', '../../..'].map((up) => path.resolve(import.meta.dirname, up));

/** The repository's search-worker/ directory (from src/ or from dist/src/), if this install has one. */
export function searchWorkerPackageDir(): string | undefined {
  return SOURCE_CANDIDATES.map((root) => path.join(root, 'search-worker')).find((dir) =>
    existsSync(path.join(dir, 'assay_search_worker', '__main__.py')),
  );
}

/** ASSAY_SEARCH_PYTHON, else the venv scripts/setup-search-worker.sh builds; undefined when not executable. */
export function searchWorkerPython(configured: string | undefined, packageDir: string): string | undefined {
  const python = configured ?? path.join(packageDir, '..', '.venv-search', 'bin', 'python');
  try {
    accessSync(python, constants.X_OK);
    return python;
  } catch {
    return undefined;
  }
}

// The sampler needs none of the service's secrets (database, S3, keys): it gets a bare environment.
const PASSED_ENV = ['PATH', 'HOME', 'LANG', 'LC_ALL', 'LC_CTYPE', 'TMPDIR', 'TZ'];

function childEnv(packageDir: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { PYTHONPATH: packageDir, PYTHONUNBUFFERED: '1' };
  for (const name of PASSED_ENV) if (process.env[name] !== undefined) env[name] = process.env[name];
  return env;
}

function forwardLines(stream: NodeJS.ReadableStream, write: (line: string) => void): void {
  createInterface({ input: stream, crlfDelay: Infinity }).on('line', (line) => {
    if (line.trim()) write(line);
  });
}

/** Starts the search worker and keeps it running until `stop()`. */
export function startSearchWorker(options: SearchWorkerOptions): SearchWorkerProcess {
  const delays = options.restartDelaysMs ?? DEFAULT_DELAYS_MS;
  const { log } = options;
  const fields = { component: 'search-worker', taskQueue: options.taskQueue };
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  let restartTimer: NodeJS.Timeout | undefined;
  let failuresInARow = 0;
  let stopping = false;

  const launch = () => {
    restartTimer = undefined;
    const startedAt = Date.now();
    const args = ['-m', 'assay_search_worker', '--address', options.address];
    args.push('--namespace', options.namespace, '--task-queue', options.taskQueue);
    // It exits by itself when this process is gone (kill -9 included): no orphan keeps polling.
    args.push('--parent-pid', String(process.pid));
    // Its own process group: a terminal's Ctrl-C reaches the service, which stops it in order.
    const spawned = spawn(options.python, args, {
      env: childEnv(options.packageDir),
      cwd: options.packageDir,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = spawned;
    forwardLines(spawned.stdout!, (line) => log.info({ ...fields, pid: spawned.pid }, line));
    forwardLines(spawned.stderr!, (line) => log.warn({ ...fields, pid: spawned.pid }, line));
    exited = new Promise((resolve) => {
      spawned.once('error', (error) => {
        log.warn({ ...fields, err: error.message }, 'search worker could not start');
        resolve();
        if (spawned.pid === undefined) onExit(startedAt, null, null);
      });
      spawned.once('exit', (code, signal) => {
        resolve();
        onExit(startedAt, code, signal);
      });
    });
  };

  const onExit = (startedAt: number, code: number | null, signal: NodeJS.Signals | null) => {
    child = undefined;
    if (stopping) return;
    if (Date.now() - startedAt >= (options.healthyAfterMs ?? 60_000)) failuresInARow = 0;
    const delay = delays[Math.min(failuresInARow, delays.length - 1)]!;
    failuresInARow += 1;
    log.warn(
      { ...fields, code, signal, restartInMs: delay, failuresInARow },
      'search worker exited; restarting it (random, sobol and tpe sweeps wait for it meanwhile)',
    );
    restartTimer = setTimeout(launch, delay);
  };

  launch();
  log.info({ ...fields, python: options.python, pid: child?.pid }, 'search worker started');

  return {
    pid: () => child?.pid,
    async stop() {
      stopping = true;
      clearTimeout(restartTimer);
      const running = child;
      if (!running?.pid) return;
      const group = -running.pid;
      const kill = (sig: NodeJS.Signals) => {
        try {
          process.kill(group, sig);
        } catch {
          // ESRCH: already gone.
        }
      };
      kill('SIGTERM');
      const timer = setTimeout(() => kill('SIGKILL'), options.stopGraceMs ?? 5_000);
      await exited;
      clearTimeout(timer);
      // Anything it started in its group goes with it.
      kill('SIGKILL');
    },
  };
}

/**
 * The embedded default's search worker, on the deployment's search queue; undefined (and said in the log) when
 * this install has no search-worker/ or no Python for it: searching sweeps then answer 503.
 */
export function startEmbeddedSearchWorker(
  settings: { python: string | undefined },
  at: { address: string; namespace: string; deploymentQueue: string; log: Log },
): SearchWorkerProcess | undefined {
  const packageDir = searchWorkerPackageDir();
  const python = packageDir && searchWorkerPython(settings.python, packageDir);
  if (!packageDir || !python) {
    at.log.warn(
      { component: 'search-worker', python: settings.python },
      packageDir
        ? 'random, sobol and tpe sweeps are off: no Python for the search worker (run `bash scripts/setup-search-worker.sh`, or set ASSAY_SEARCH_PYTHON)'
        : 'random, sobol and tpe sweeps are off: this install has no search-worker/ (run it apart, or set ASSAY_SEARCH_WORKER=off)',
    );
    return undefined;
  }
  return startSearchWorker({
    python,
    packageDir,
    address: at.address,
    namespace: at.namespace,
    taskQueue: searchTaskQueue(at.deploymentQueue),
    log: at.log,
  });
}
