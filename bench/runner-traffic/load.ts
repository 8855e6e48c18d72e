// The two closed-loop phases every target goes through, measured the same way for each.
import { cpuSplit, type CpuAccount, type CpuSplit } from './cpu-account.ts';
import { Latencies } from './stats.ts';

/** What a simulated runner can do against one server; `Run` is whatever addresses one run there. */
export interface RunnerTarget<Run> {
  readonly name: string;
  /** Untimed setup: `count` runs, ready for their runners. */
  prepareRuns(count: number): Promise<Run[]>;
  /** What a runner does before its first heartbeat (ours: read the config, start). */
  begin(run: Run): Promise<void>;
  heartbeat(run: Run): Promise<void>;
  /** The run's successful end. */
  finish(run: Run): Promise<void>;
  /** One whole short lifecycle, from creating the run to its end, with one heartbeat. */
  lifecycle(): Promise<void>;
}

export interface PhaseResult {
  /** Operations that ended inside the measured window (after the warm-up, before the deadline). */
  count: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  firstError: string | undefined;
  /** Where the CPU went over the whole loop (warm-up and tail included), per second and per operation. */
  cpu?: CpuSplit;
}

export interface HeartbeatResult extends PhaseResult {
  /** Wall time for all runners to begin (before the heartbeats) and to finish (after them). */
  beginS: number;
  finishS: number;
}

const now = () => performance.now();

/** Counts completions and latencies inside [from, to) only: the first seconds warm up, the tail drains. */
class Window {
  readonly latencies = new Latencies();
  count = 0;
  /** Every operation that succeeded, inside the window or not. */
  completed = 0;
  errors = 0;
  firstError: string | undefined;
  readonly from: number;
  readonly to: number;
  constructor(from: number, to: number) {
    this.from = from;
    this.to = to;
  }

  async measure(op: () => Promise<void>): Promise<void> {
    const started = now();
    try {
      await op();
    } catch (error) {
      this.errors++;
      this.firstError ??= error instanceof Error ? error.message : String(error);
      // A failing server must not be hammered by a tight loop of errors.
      await new Promise((resolve) => setTimeout(resolve, 50));
      return;
    }
    const ended = now();
    this.completed++;
    if (ended >= this.from && ended < this.to) {
      this.count++;
      this.latencies.add(ended - started);
    }
  }

  result(): PhaseResult {
    const seconds = (this.to - this.from) / 1000;
    return {
      count: this.count,
      perSecond: this.count / seconds,
      p50Ms: this.latencies.quantile(0.5),
      p99Ms: this.latencies.quantile(0.99),
      errors: this.errors,
      firstError: this.firstError,
    };
  }
}

function windowOf(seconds: number): { window: Window; end: number } {
  const start = now();
  const warmup = Math.min(2_000, seconds * 100);
  const end = start + seconds * 1000;
  return { window: new Window(start + warmup, end), end };
}

/**
 * Runs every runner's loop until `end` (or an abort); runners whose op throws count an error and go on.
 * Answers the window's figures with the server's CPU use over the loops.
 */
async function closedLoops(
  window: Window,
  count: number,
  end: number,
  signal: AbortSignal,
  cpu: CpuAccount | undefined,
  op: (i: number) => Promise<void>,
): Promise<PhaseResult> {
  const before = await cpu?.snapshot();
  await Promise.all(
    Array.from({ length: count }, async (_, i) => {
      while (now() < end && !signal.aborted) await window.measure(() => op(i));
    }),
  );
  const result = window.result();
  return before ? { ...result, cpu: cpuSplit(before, await cpu!.snapshot(), window.completed) } : result;
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const started = now();
  await fn();
  return (now() - started) / 1000;
}

/**
 * Phase 1: N runners each begin their own run, then heartbeat in a closed loop (as fast as answers come) for
 * `seconds`, then finish. Only requests that start and end inside the window after a warm-up are counted.
 * With `runs` > N, N connections heartbeat over that many running runs instead, each beat for a run drawn at
 * random, as pgbench's `random(1, runs)` draws them.
 */
export async function heartbeatPhase<Run>(
  target: RunnerTarget<Run>,
  runners: number,
  seconds: number,
  signal: AbortSignal,
  cpu?: CpuAccount,
  runCount = runners,
): Promise<HeartbeatResult> {
  const runs = await target.prepareRuns(runCount);
  const beginS = await timed(() => Promise.all(runs.map((run) => target.begin(run))));
  const { window, end } = windowOf(seconds);
  const pick = (i: number) => (runCount === runners ? i : Math.floor(Math.random() * runCount));
  const result = await closedLoops(window, runners, end, signal, cpu, (i) =>
    target.heartbeat(runs[pick(i)]!),
  );
  const finishS = await timed(() => Promise.all(runs.map((run) => target.finish(run))));
  return { ...result, beginS, finishS };
}

/** Phase 2: N runners each run whole short lifecycles back to back for `seconds`. */
export async function lifecyclePhase(
  target: RunnerTarget<unknown>,
  runners: number,
  seconds: number,
  signal: AbortSignal,
  cpu?: CpuAccount,
): Promise<PhaseResult> {
  const { window, end } = windowOf(seconds);
  return closedLoops(window, runners, end, signal, cpu, () => target.lifecycle());
}
