// The Assay side of bench/sweeps.ts: a sweep of the digits task on a real service (`assay server`, the `local`
// provider), created through the API, polled until done, then read back run by run for where its time went.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { stringify } from 'yaml';
import type { CreateSweepBody, SearchSpace, Sweep } from '../../src/contract/index.ts';

export interface SweepCase {
  /** `list`: points drawn by the bench, no search and no early stopping (what a tree without them runs). */
  strategy: 'random' | 'tpe' | 'list';
  earlyStopping: boolean;
  concurrency: number;
  seed: number;
  trials: number;
  epochs: number;
}

/** One trial's run, its moments in ms since the epoch (NaN when unknown). */
export interface TrialTiming {
  trial: number;
  state: string;
  failureReason: string | null;
  stepsReached: number;
  /** The last val_acc it logged. */
  lastValue: number | null;
  created: number;
  spawned: number;
  started: number;
  firstMetric: number;
  lastMetric: number;
  epochMs: number;
  ended: number;
}

export interface SweepOutcome {
  wallMs: number;
  best: number | null;
  trialEpochs: number;
  stoppedEarly: number;
  failed: number;
  trials: TrialTiming[];
}

export interface SweepService {
  url: string;
  key: string;
  dataDir: string;
}

/** The trial's training script: the plain one (metrics through $ASSAY_METRICS_FILE), or its Python SDK twin. */
export const TASKS = {
  file: path.join(import.meta.dirname, 'train_digits.py'),
  sdk: path.resolve(import.meta.dirname, '../../examples/train_digits_sdk.py'),
} as const;
export type Task = keyof typeof TASKS;
const SPACE = path.join(import.meta.dirname, 'space.json');

export async function readSpace(): Promise<SearchSpace> {
  return JSON.parse(await readFile(SPACE, 'utf8')) as SearchSpace;
}

async function call<T>(svc: SweepService, method: string, route: string, body?: unknown): Promise<T> {
  const res = await fetch(`${svc.url}${route}`, {
    method,
    headers: { authorization: `Bearer ${svc.key}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${route}: ${res.status} ${text}`);
  return JSON.parse(text) as T;
}

/** The sweep request: the same space, objective (val_acc, maximized) and ASHA settings as the baselines. */
export function sweepBody(
  c: SweepCase,
  python: string,
  space: SearchSpace,
  task: Task = 'file',
): CreateSweepBody {
  const base_yaml = stringify({
    lr: 0.001,
    hidden: 64,
    alpha: 0.0001,
    batch_size: 64,
    epochs: c.epochs,
    seed: 0,
    launch: { command: `${python} ${TASKS[task]}` },
  });
  if (c.strategy === 'list')
    return {
      strategy: 'list',
      base_yaml,
      list: drawPoints(space, c.trials, c.seed),
      concurrency: c.concurrency,
    };
  return {
    strategy: c.strategy,
    base_yaml,
    space,
    objective: { metric: 'val_acc', goal: 'maximize' },
    trials: c.trials,
    concurrency: c.concurrency,
    seed: c.seed,
    max_retries: 0,
    ...(c.earlyStopping
      ? { early_stopping: { kind: 'asha', min_step: 1, max_step: c.epochs, reduction_factor: 3 } }
      : {}),
  };
}

/** Uniform points of the space from a seeded generator (mulberry32), for `list`. */
function drawPoints(space: SearchSpace, count: number, seed: number): Record<string, unknown>[] {
  let s = seed >>> 0;
  const next = () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return Array.from({ length: count }, () =>
    Object.fromEntries(
      Object.entries(space).map(([name, d]) => {
        const u = next();
        if (d.distribution === 'choice') return [name, d.values[Math.floor(u * d.values.length)]];
        if (d.distribution === 'uniform') return [name, d.low + u * (d.high - d.low)];
        const log = d.distribution === 'log_uniform' || d.log === true;
        const value = log
          ? Math.exp(Math.log(d.low) + u * (Math.log(d.high) - Math.log(d.low)))
          : d.low + u * (d.high - d.low);
        return [name, d.distribution === 'int' ? Math.min(d.high, Math.round(value)) : value];
      }),
    ),
  );
}

/**
 * The create, asked again while the service answers 503 sampler_unavailable (its search worker starts a
 * moment after the service; nothing is created on a 503), for up to a minute.
 */
async function createWhenSampled(svc: SweepService, route: string, body: CreateSweepBody): Promise<Sweep> {
  for (const deadline = Date.now() + 60_000; ;) {
    try {
      return await call<Sweep>(svc, 'POST', route, body);
    } catch (error) {
      if (!String(error).includes('sampler_unavailable') || Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}

/** Creates the sweep on a new draft experiment, polls it until done, and reads its runs' timings. */
export async function runSweep(
  svc: SweepService,
  c: SweepCase,
  python: string,
  onProgress: (sweep: Sweep) => void,
  timeoutMs: number,
  task: Task = 'file',
): Promise<SweepOutcome> {
  const experiment = await call<{ id: string }>(svc, 'POST', '/experiments', {
    name: `bench sweep ${c.strategy} ${c.seed}`,
  });
  const body = sweepBody(c, python, await readSpace(), task);
  const t0 = performance.now();
  const created = await createWhenSampled(svc, `/experiments/${experiment.id}/sweeps`, body);
  const route = `/experiments/${experiment.id}/sweeps/${created.id}`;
  let sweep = created;
  let seen = '';
  while (!sweep.progress.done) {
    if (performance.now() - t0 > timeoutMs)
      throw new Error(`sweep not done after ${timeoutMs / 1000} s: ${JSON.stringify(sweep.progress)}`);
    await new Promise((r) => setTimeout(r, 250));
    sweep = await call<Sweep>(svc, 'GET', route);
    const progress = JSON.stringify(sweep.progress);
    if (progress !== seen) onProgress(sweep);
    seen = progress;
  }
  const wallMs = performance.now() - t0;
  const trials = await trialTimings(svc, experiment.id, sweep);
  return {
    wallMs,
    best: sweep.best?.value ?? bestOf(trials),
    trialEpochs: trials.reduce((sum, t) => sum + t.stepsReached, 0),
    stoppedEarly: sweep.progress.stopped_early,
    failed: sweep.progress.failed,
    trials,
  };
}

/** A list sweep has no objective, so no `best`: the highest last val_acc of a succeeded run. */
function bestOf(trials: TrialTiming[]): number | null {
  const values = trials.flatMap((t) =>
    t.state === 'succeeded' && t.lastValue !== null ? [t.lastValue] : [],
  );
  return values.length > 0 ? Math.max(...values) : null;
}

async function trialTimings(svc: SweepService, experimentId: string, sweep: Sweep): Promise<TrialTiming[]> {
  const spawnedAt = await instanceStarts(svc.dataDir);
  const out: TrialTiming[] = [];
  for (const [i, run] of sweep.runs.entries()) {
    const runRoute = `/experiments/${experimentId}/variations/${run.n}/runs/${run.r}`;
    const detail = await call<{ created_at: string; started_at: string | null; ended_at: string | null }>(
      svc,
      'GET',
      runRoute,
    );
    const points = await call<{ points: { step: number; value: number; timestamp: string }[] }>(
      svc,
      'GET',
      `${runRoute}/metrics/val_acc?limit=10000`,
    )
      .then((s) => s.points)
      .catch(() => []);
    const times = points.map((p) => Date.parse(p.timestamp));
    out.push({
      trial: run.trial ?? i + 1,
      state: run.state,
      failureReason: run.failure_reason,
      stepsReached: points.at(-1)?.step ?? 0,
      lastValue: points.at(-1)?.value ?? null,
      created: Date.parse(detail.created_at),
      spawned: spawnedAt.get(run.workflow_id) ?? Number.NaN,
      started: detail.started_at ? Date.parse(detail.started_at) : Number.NaN,
      firstMetric: times[0] ?? Number.NaN,
      lastMetric: times.at(-1) ?? Number.NaN,
      epochMs: times.length > 1 ? times[1]! - times[0]! : Number.NaN,
      ended: detail.ended_at ? Date.parse(detail.ended_at) : Number.NaN,
    });
  }
  return out;
}

/** Instance spawned, per workflow id: the local provider's records (<data dir>/instances). */
async function instanceStarts(dataDir: string): Promise<Map<string, number>> {
  try {
    const file = path.join(dataDir, 'instances', 'local-instances.json');
    const state = JSON.parse(await readFile(file, 'utf8')) as Record<string, { startedAt: string }>;
    return new Map(Object.entries(state).map(([id, r]) => [id, Date.parse(r.startedAt)]));
  } catch {
    return new Map();
  }
}
