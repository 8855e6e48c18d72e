// The flow of `assay run`: config → start → heartbeats and output uploads while the command runs →
// succeed or fail by how it ended. Signals and cancels (heard through the control long-poll, or a heartbeat)
// stop the command and fail the run `abandoned`.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Client } from '../client/client.ts';
import { APIConnectionError, ConflictError, ServerError, type Run } from '../client/index.ts';
import { formatBytes } from '../client/format-bytes.ts';
import type { CancelReason } from '@assay/contract';
import { componentName, contentTypeOf } from './content-type.ts';
import { errorLine } from './output.ts';
import { describeExit, exitCodeOf, startChild, type ChildExit } from './run-child.ts';
import { environmentSnapshot } from '../client/environment.ts';
import { ControlPoll } from './run-control-poll.ts';
import { Heartbeat } from './run-heartbeat.ts';
import { OutputCapture } from './run-log-capture.ts';
import { LogShipper } from './run-log-shipper.ts';
import { OutputsWatcher, type OutputsSummary } from './run-outputs.ts';
import { SystemMetrics } from './run-system-metrics.ts';
import { describeProgress, ProgressLine } from './upload-progress.ts';

export interface SuperviseOptions {
  heartbeatMs: number;
  graceMs: number;
  outputsDir: string;
  /** The environment snapshot, when the caller started taking it earlier (it never rejects). */
  environment?: Promise<Record<string, unknown>>;
  /**
   * `leave`: a signal from outside (to `assay run`, or one that killed the command) ends the command but not
   * the run, which its orchestrator then judges by how the instance ended (a batch scheduler's preemption,
   * requeue or time limit signals every process of the job alike).
   */
  onSignal?: 'fail' | 'leave';
  /**
   * How long the command's last output lines may take to reach the service once it exited, before the run
   * ends anyway (5 s at most after a signal to `assay run`); default 30 s.
   */
  logFlushMs?: number;
  /** Bytes of unsent output lines kept in memory (then on disk) and on disk (then the oldest dropped). */
  logMemoryBytes?: number;
  logDiskBytes?: number;
  /** Seconds between samples of the system metrics (CPU, memory, GPUs); 0: none. Default 10. */
  systemMetricsS?: number;
}

/** Why the command was stopped by us: a cancel, a signal to `assay run`, or the run ending on the server. */
type Ending = { reason: 'cancelled' | 'interrupted' | 'ended'; detail: string; signal?: NodeJS.Signals };

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
const STABLE_MS = 2000;
const POLL_MS = 500;
/** How long the command's pipes may stay open after it exited (held by a process that left its group). */
const PIPE_GRACE_MS = 2000;
const log = (line: string) => process.stderr.write(`assay: ${line}\n`);

/** Runs the command as the run and answers the exit code of `assay run`. */
export async function supervise(
  client: Client,
  run: Run,
  command: readonly string[],
  options: SuperviseOptions,
): Promise<number> {
  // The probes (python, git, nvidia-smi) take a while, a pyenv shim alone a hundred ms: they run while the
  // config is read (run-command.ts starts them earlier still, before the key exchange). They never reject.
  const snapshot = options.environment ?? environmentSnapshot(command);
  // The instance may boot while its service replica restarts: the first calls wait for it, like the last one.
  const config = await untilReachable('read the run’s config', () => run.config());
  const workDir = await mkdtemp(path.join(os.tmpdir(), 'assay-run-'));
  try {
    const configFile = path.join(workDir, 'config.json');
    await writeFile(configFile, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
    const metricsFile = path.join(workDir, 'metrics.jsonl');
    await writeFile(metricsFile, '', { mode: 0o600 });
    await mkdir(options.outputsDir, { recursive: true });
    const environment = await snapshot;
    await untilReachable(
      'start the run',
      () => run.start(environment),
      // A start whose answer was lost landed if the run is running now.
      async () => (await run.refresh().data()).state === 'running',
    );
    log(
      `running ${command.join(' ')} as run ${run.r} of variation ${run.n} of experiment ${run.experimentId}`,
    );
    const env = {
      ...process.env,
      ASSAY_CONFIG_FILE: configFile,
      ASSAY_OUTPUTS_DIR: options.outputsDir,
      ASSAY_METRICS_FILE: metricsFile,
      ASSAY_EXPERIMENT_ID: run.experimentId,
      ASSAY_VARIATION: String(run.n),
      ASSAY_RUN: String(run.r),
      // Its output is a pipe now, which Python fills 8 KiB at a time: unbuffered, a print shows at once on the
      // terminal and in the log, as it would on a terminal. A PYTHONUNBUFFERED of the user's own (even empty)
      // is kept.
      ...('PYTHONUNBUFFERED' in process.env ? {} : { PYTHONUNBUFFERED: '1' }),
    };
    return await watch(client, run, command, env, { metricsFile, workDir }, options);
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
}

/**
 * Files under outputs/checkpoints/ are checkpoints: a later run of the variation resumes from the newest
 * (GET …/checkpoint).
 */
function assetKindOf(name: string): 'checkpoint' | 'output' {
  return name.startsWith('checkpoints/') ? 'checkpoint' : 'output';
}

async function watch(
  client: Client,
  run: Run,
  command: readonly string[],
  env: NodeJS.ProcessEnv,
  { metricsFile, workDir }: { metricsFile: string; workDir: string },
  options: SuperviseOptions,
): Promise<number> {
  const progress = new ProgressLine();
  // Loaded beside the command's start, not before it: the tail only has to begin before the file grows much.
  const metrics = import('./run-metrics.ts').then(({ MetricsFileTail }) => {
    const tail = new MetricsFileTail(metricsFile, run, {
      onMalformed: (line, reason) => log(`ASSAY_METRICS_FILE line ${line} skipped: ${reason}`),
      onError: (error) => log(`metrics: ${errorLine(error)}`),
    });
    tail.start();
    return tail;
  });
  const ref = { experimentId: run.experimentId, n: run.n, r: run.r };
  const outputs = new OutputsWatcher(
    options.outputsDir,
    async (file, name) => {
      await client.prepareUploads();
      return client.uploadAsync({
        kind: assetKindOf(name),
        name,
        run: ref,
        files: [{ path: file, name: componentName(name), contentType: contentTypeOf(name) }],
      });
    },
    {
      stableMs: STABLE_MS,
      pollMs: POLL_MS,
      onUploaded: (name, asset) =>
        progress.note(
          `assay: uploaded ${name} (${formatBytes(Object.values(asset.components).reduce((s, c) => s + c.size, 0))})`,
        ),
      onFailed: (name, error) => log(`upload of ${name} failed: ${errorLine(error)}`),
      // Loaded in the background from the first output on: a load inside the upload call would hold up the
      // heartbeats while it runs.
      onChange: () => void client.prepareUploads(),
    },
  );
  const existing = await outputs.baseline();
  if (existing > 0)
    log(
      `${existing} file(s) already in ${options.outputsDir} are not uploaded unless the command changes them`,
    );
  const child = startChild(command, env, { captureIn: workDir });
  // The command's output goes on to our stdout and stderr as it comes, and to the run's log.
  const shipper = new LogShipper({
    send: (firstSeq, lines) => client.runs.appendLogs(run.experimentId, run.n, run.r, firstSeq, lines),
    spillDir: path.join(workDir, 'log-spill'),
    notice: log,
    memoryBytes: options.logMemoryBytes,
    diskBytes: options.logDiskBytes,
  });
  const capture = new OutputCapture(
    [
      { stream: 'stdout' as const, from: child.stdout, to: process.stdout },
      { stream: 'stderr' as const, from: child.stderr, to: process.stderr },
    ].flatMap((s) => (s.from ? [{ ...s, from: s.from }] : [])),
    (line) => shipper.add(line),
  );
  // A handle of its own: the metrics file's lines without a step number on from the main handle's last step.
  const systemRun = client.run(run.experimentId, run.n, run.r);
  const systemS = options.systemMetricsS ?? 10;
  let systemFailed = false;
  const system =
    child.pid !== undefined && systemS > 0
      ? new SystemMetrics(
          child.pid,
          systemS,
          {
            onSample: (values, step) => {
              try {
                systemRun.logMetrics(values, { step });
              } catch (error) {
                if (!systemFailed) log(`system metrics: ${errorLine(error)}`);
                systemFailed = true;
              }
            },
            onGpuError: log,
          },
          process.env,
        )
      : undefined;
  let ending: Ending | undefined;
  let exited = false;
  const stop = (next: Ending) => {
    if (ending === undefined) {
      ending = next;
      void child.stop(options.graceMs, next.signal ?? 'SIGTERM');
    } else if (next.reason === 'interrupted') {
      child.signal('SIGKILL'); // a signal while already stopping: no second grace period
    }
  };
  // The control long-poll hears a cancel at once; the heartbeat's answer is the fallback.
  const cancelled = (why: CancelReason | null | undefined) => {
    const detail = why === 'stopped_early' ? 'stopped early' : 'cancelled';
    if (ending === undefined)
      log(`the run was ${detail}; stopping the command (SIGTERM, SIGKILL after ${options.graceMs / 1000} s)`);
    stop({ reason: 'cancelled', detail });
  };
  const ended = (state: string) => {
    if (ending === undefined) log(`the run is ${state} on the server; stopping the command`);
    stop({ reason: 'ended', detail: state });
  };
  const heartbeat = new Heartbeat(run, options.heartbeatMs, {
    onCancel: cancelled,
    onEnded: ended,
    onError: (error) => log(`heartbeat failed (the next one tries again): ${errorLine(error)}`),
  });
  const control = new ControlPoll(run, {
    onCancel: cancelled,
    onEnded: ended,
    onError: (error, retrying) =>
      log(
        retrying
          ? `control poll failed (trying again): ${errorLine(error)}`
          : `control poll refused (cancels arrive with the heartbeat): ${errorLine(error)}`,
      ),
  });
  // Signals go to the command (its own process group, so a terminal's Ctrl-C arrives only through us).
  let lateSignal: (signal: NodeJS.Signals) => void = () => undefined;
  const onSignal = (signal: NodeJS.Signals) =>
    exited ? lateSignal(signal) : stop({ reason: 'interrupted', detail: `interrupted by ${signal}`, signal });
  for (const s of SIGNALS) process.on(s, onSignal);
  try {
    heartbeat.start();
    control.start();
    outputs.start();
    system?.start();
    const exit = await child.exited;
    exited = true;
    const interrupted = new Promise<NodeJS.Signals>((resolve) => (lateSignal = resolve));
    // A second signal while the last lines are sent: no more waiting for the service.
    void interrupted.then(() => shipper.stop());
    await control.stop();
    if (exit.error !== undefined) log(exit.error);
    await system?.stop();
    const flushMs =
      ending?.reason === 'interrupted'
        ? Math.min(options.logFlushMs ?? 30_000, 5_000)
        : (options.logFlushMs ?? 30_000);
    // The command's last points and lines are stored before its run ends.
    await Promise.all([
      (await metrics).finish(),
      capture.finish(PIPE_GRACE_MS).then(() => shipper.finish(flushMs)),
      systemRun.flushMetrics().catch((error: unknown) => log(`system metrics: ${errorLine(error)}`)),
    ]);
    if (options.onSignal === 'leave' && killedFromOutside(ending, exit)) {
      await heartbeat.stop();
      await waitForUploads(outputs, progress, interrupted);
      log(
        `${ending?.detail ?? `the command was ${describeExit(exit)}`}: the run is left to its orchestrator (ASSAY_RUN_ON_SIGNAL=leave)`,
      );
      return exitCodeOf(exit) || 1;
    }
    if (ending?.reason === 'interrupted') {
      // A signal to assay run often means the machine is going down: report first, then upload what is left.
      const code = await report(run, heartbeat, exit, ending, undefined);
      await waitForUploads(outputs, progress, interrupted);
      return code;
    }
    const uploaded = await waitForUploads(outputs, progress, interrupted);
    if (typeof uploaded === 'string' && options.onSignal === 'leave') {
      // The signal reached this process after the command had ended: the scheduler's all the same.
      log(
        `interrupted by ${uploaded} after the command ended: the run is left to its orchestrator (ASSAY_RUN_ON_SIGNAL=leave)`,
      );
      return exitCodeOf(exit) || 1;
    }
    if (typeof uploaded === 'string') {
      // Uploads not done stay in the recovery store (~/.assay/uploads.db) for a later resume.
      const detail = `interrupted by ${uploaded} while uploading outputs`;
      log(detail);
      return await report(
        run,
        heartbeat,
        exit,
        { reason: 'interrupted', detail, signal: uploaded },
        undefined,
      );
    }
    return await report(run, heartbeat, exit, ending, uploaded);
  } finally {
    for (const s of SIGNALS) process.off(s, onSignal);
    shipper.stop();
    await system?.stop();
    (await metrics).stop();
    await control.stop();
    await heartbeat.stop();
    progress.done();
  }
}

/** A signal to `assay run`, or a SIGTERM or SIGKILL that reached the command without our asking. */
function killedFromOutside(ending: Ending | undefined, exit: ChildExit): boolean {
  if (ending) return ending.reason === 'interrupted';
  // A shell whose program a scheduler's signal killed exits 128 + the signal's number (143, 137), often
  // before the same signal reaches this process.
  return (
    exit.signal === 'SIGTERM' ||
    exit.signal === 'SIGKILL' ||
    exit.code === SHELL_EXIT_SIGTERM ||
    exit.code === SHELL_EXIT_SIGKILL
  );
}

const SHELL_EXIT_SIGTERM = 128 + 15;
const SHELL_EXIT_SIGKILL = 128 + 9;

/** The uploads of the outputs, with a live line on a terminal; a signal cuts the wait short. */
async function waitForUploads(
  outputs: OutputsWatcher,
  progress: ProgressLine,
  interrupted: Promise<NodeJS.Signals>,
): Promise<OutputsSummary | NodeJS.Signals> {
  const show = () => {
    const p = outputs.progress();
    if (p.pending > 0)
      progress.update(`assay: uploading outputs, ${p.pending} file(s) left: ${describeProgress(p)}`);
  };
  const timer = progress.enabled ? setInterval(show, 200) : undefined;
  try {
    return await Promise.race([outputs.finish(), interrupted]);
  } finally {
    clearInterval(timer);
    progress.done();
  }
}

/** How long the final move keeps trying through a service outage (a restart, a failover) before giving up. */
const REPORT_PATIENCE_MS = 10 * 60_000;

/**
 * The run's final move, tried again while the service is unreachable or answers 5xx: the work is done, and a
 * service that is down for a minute must not turn a finished run into a silent one (the client itself never
 * retries). A 409 after a failed try means an earlier try landed if the run now holds the state it asked for.
 */
async function patiently<T>(
  run: Run,
  patienceMs: number,
  target: 'succeeded' | 'failed',
  move: () => Promise<T>,
): Promise<T | undefined> {
  const deadline = Date.now() + patienceMs;
  for (let delay = 500, tried = false; ; delay = Math.min(delay * 2, 15_000), tried = true) {
    try {
      return await move();
    } catch (error) {
      if (tried && error instanceof ConflictError && (await run.refresh().data()).state === target)
        return undefined;
      const transient = error instanceof APIConnectionError || error instanceof ServerError;
      if (!transient || Date.now() + delay > deadline) throw error;
      log(`could not report the end of the run yet (${errorLine(error)}); trying again in ${delay / 1000} s`);
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}

/** How long the run's first calls keep trying while the service is unreachable or answers 5xx. */
const START_PATIENCE_MS = 2 * 60_000;

/**
 * A first call of the run, tried again while the service is unreachable or answers 5xx; after a failed try, a
 * 409 means an earlier try landed when `landed` says so.
 */
async function untilReachable<T>(
  what: string,
  call: () => Promise<T>,
  landed?: () => Promise<boolean>,
): Promise<T | undefined> {
  const deadline = Date.now() + START_PATIENCE_MS;
  for (let delay = 500, tried = false; ; delay = Math.min(delay * 2, 10_000), tried = true) {
    try {
      return await call();
    } catch (error) {
      if (tried && landed && error instanceof ConflictError && (await landed())) return undefined;
      const transient = error instanceof APIConnectionError || error instanceof ServerError;
      if (!transient || Date.now() + delay > deadline) throw error;
      log(`could not ${what} yet (${errorLine(error)}); trying again in ${delay / 1000} s`);
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}

/** The final move, and the exit code: the command's own, never 0 unless the run succeeded. */
async function report(
  run: Run,
  heartbeat: Heartbeat,
  exit: ChildExit,
  ending: Ending | undefined,
  outputs: OutputsSummary | undefined,
): Promise<number> {
  await heartbeat.stop();
  const code = exitCodeOf(exit);
  const failed = (c: number) => (c === 0 ? 1 : c);
  // A signal often means the machine is going down: one try, then upload what is left.
  const patience = ending?.reason === 'interrupted' ? 0 : REPORT_PATIENCE_MS;
  try {
    if (ending?.reason === 'ended') {
      log(`the run ended on the server (${ending.detail}); command: ${describeExit(exit)}`);
      return failed(code);
    }
    if (ending) {
      await patiently(run, patience, 'failed', () =>
        run.fail('abandoned', `${ending.detail}; command: ${describeExit(exit)}`),
      );
      log(`run failed: abandoned (${ending.detail})`);
      return failed(ending.signal && code === 0 ? exitCodeOf({ code: null, signal: ending.signal }) : code);
    }
    if (code === 0 && outputs && outputs.failures.length > 0) {
      const names = outputs.failures.map((f) => f.relativePath).join(', ');
      await patiently(run, patience, 'failed', () =>
        run.fail(
          'crash',
          `the command succeeded but ${outputs.failures.length} output upload(s) failed: ${names}`,
        ),
      );
      log(`run failed: crash (output uploads failed: ${names})`);
      return 1;
    }
    if (code === 0) {
      const answer = await patiently(run, patience, 'succeeded', () => run.succeed());
      // The service fails a run that was asked to stop before its success was reported (a stop that
      // reached the runner late never turns into a success).
      if (answer?.state === 'failed') {
        log(`run failed: ${answer.failure_reason} (it was asked to stop before the command exited 0)`);
        return 1;
      }
      log(`run succeeded${outputs ? ` (${outputs.uploaded.length} output file(s) uploaded)` : ''}`);
      return 0;
    }
    await patiently(run, patience, 'failed', () => run.fail('crash', describeExit(exit)));
    log(`run failed: crash (${describeExit(exit)})`);
    return code;
  } catch (error) {
    log(`could not report the end of the run: ${errorLine(error)}`);
    return failed(code);
  }
}
