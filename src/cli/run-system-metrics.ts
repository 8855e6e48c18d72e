// System metrics of `assay run`: every few seconds the command's CPU and memory (its process group and
// descendants, from /proc) and each visible GPU's utilisation, memory and power (nvidia-smi), logged as the
// run's metrics under system/. Step: whole seconds since the command started.
import { execFile, type ExecFileException } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';

/** What one sample gives: metric key → value. */
export type Sample = Record<string, number>;

export interface SystemMetricsEvents {
  /** A sample's values, at `step` seconds since the command started. */
  onSample(values: Sample, step: number): void;
  /** Said once: nvidia-smi failed (its series stop, the rest go on). */
  onGpuError(message: string): void;
}

/** Linux's clock ticks per second (USER_HZ), the unit of /proc/<pid>/stat times, 100 on every platform. */
const TICKS_PER_S = 100;
const NVIDIA_SMI_TIMEOUT_MS = 5000;
const GPU_QUERY = [
  '--query-gpu=index,utilization.gpu,memory.used,power.draw',
  '--format=csv,noheader,nounits',
];

/** Samples the process tree rooted at `pid` (its process group, and descendants that left it). */
export class SystemMetrics {
  readonly #pid: number;
  readonly #intervalMs: number;
  readonly #events: SystemMetricsEvents;
  readonly #env: NodeJS.ProcessEnv;
  readonly #startedAt = Date.now();
  #timer: NodeJS.Timeout | undefined;
  #sampling: Promise<void> | undefined;
  #last: { ticks: number; at: number } | undefined;
  #gpu = true;

  constructor(pid: number, intervalS: number, events: SystemMetricsEvents, env: NodeJS.ProcessEnv) {
    this.#pid = pid;
    this.#intervalMs = intervalS * 1000;
    this.#events = events;
    this.#env = env;
  }

  start(): void {
    // The first CPU figure needs a starting point.
    this.#sampling = this.#cpuTicks()
      .then((ticks) => {
        if (ticks !== undefined) this.#last = { ticks, at: Date.now() };
      })
      .catch(() => undefined)
      .finally(() => (this.#sampling = undefined));
    this.#timer = setInterval(() => {
      if (this.#sampling) return;
      this.#sampling = this.#sample()
        .catch(() => undefined)
        .finally(() => (this.#sampling = undefined));
    }, this.#intervalMs);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.#sampling;
  }

  async #sample(): Promise<void> {
    const step = Math.round((Date.now() - this.#startedAt) / 1000);
    const [tree, gpus] = await Promise.all([this.#tree(), this.#gpu ? this.#gpus() : undefined]);
    const values: Sample = {};
    if (tree) {
      const now = Date.now();
      if (this.#last && now > this.#last.at) {
        const cpu = ((tree.ticks - this.#last.ticks) / TICKS_PER_S / ((now - this.#last.at) / 1000)) * 100;
        // A process that ended and was not reaped by one of the tree takes its ticks with it.
        values['system/cpu_percent'] = Math.max(0, round(cpu, 1));
      }
      this.#last = { ticks: tree.ticks, at: now };
      values['system/rss_mb'] = round(tree.rssKb / 1024, 1);
    }
    Object.assign(values, gpus);
    if (Object.keys(values).length > 0) this.#events.onSample(values, step);
  }

  async #cpuTicks(): Promise<number | undefined> {
    return (await this.#tree())?.ticks;
  }

  /** The tree's CPU ticks (its own and its reaped children's) and resident memory; undefined without /proc. */
  async #tree(): Promise<{ ticks: number; rssKb: number } | undefined> {
    let entries: string[];
    try {
      entries = await readdir('/proc');
    } catch {
      return undefined;
    }
    const procs = new Map<number, { ppid: number; pgrp: number; ticks: number }>();
    await Promise.all(
      entries
        .filter((e) => /^\d+$/.test(e))
        .map(async (e) => {
          const stat = await readFile(`/proc/${e}/stat`, 'utf8').catch(() => undefined);
          if (stat === undefined) return;
          // The command name (field 2) is in parentheses and may hold spaces: the fields follow its last ")".
          const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
          // f[0] is field 3 (state): ppid 4, pgrp 5, utime 14, stime 15, cutime 16, cstime 17.
          procs.set(Number(e), {
            ppid: Number(f[1]),
            pgrp: Number(f[2]),
            ticks: Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]),
          });
        }),
    );
    const inTree = new Set<number>();
    const isIn = (pid: number, depth = 0): boolean => {
      if (inTree.has(pid)) return true;
      const p = procs.get(pid);
      if (!p || depth > 64) return false;
      if (pid === this.#pid || p.pgrp === this.#pid || isIn(p.ppid, depth + 1)) {
        inTree.add(pid);
        return true;
      }
      return false;
    };
    for (const pid of procs.keys()) isIn(pid);
    if (inTree.size === 0) return { ticks: this.#last?.ticks ?? 0, rssKb: 0 };
    let ticks = 0;
    let rssKb = 0;
    await Promise.all(
      [...inTree].map(async (pid) => {
        ticks += procs.get(pid)!.ticks;
        const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
        rssKb += Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1] ?? 0);
      }),
    );
    return { ticks, rssKb };
  }

  /** Each GPU's series; none when nvidia-smi is not on PATH, and none after it failed (said once). */
  async #gpus(): Promise<Sample | undefined> {
    const out = await new Promise<{ stdout?: string; error?: ExecFileException }>((resolve) =>
      execFile(
        'nvidia-smi',
        GPU_QUERY,
        { env: this.#env, timeout: NVIDIA_SMI_TIMEOUT_MS, killSignal: 'SIGKILL', windowsHide: true },
        (error, stdout) => resolve(error ? { error } : { stdout: String(stdout) }),
      ),
    );
    if (out.error) {
      this.#gpu = false;
      if (out.error.code !== 'ENOENT')
        this.#events.onGpuError(
          `nvidia-smi failed, no GPU metrics for this run: ${out.error.message.trim()}`,
        );
      return undefined;
    }
    return parseGpuQuery(out.stdout ?? '', visibleGpus(this.#env.CUDA_VISIBLE_DEVICES));
  }
}

/**
 * `0, 45, 1234, 67.89` per GPU (index, utilisation %, memory used MiB, power W) into system/gpu0/…; a field
 * nvidia-smi cannot read (`[N/A]`, `[Not Supported]`) is left out.
 */
export function parseGpuQuery(text: string, visible?: Set<string>): Sample {
  const values: Sample = {};
  for (const line of text.split('\n')) {
    const [index, util, memory, power] = line.split(',').map((f) => f.trim());
    if (!index || !/^\d+$/.test(index) || (visible && !visible.has(index))) continue;
    const put = (name: string, field: string | undefined) => {
      const n = Number(field);
      if (field !== undefined && field !== '' && Number.isFinite(n)) values[`system/gpu${index}/${name}`] = n;
    };
    put('utilization_percent', util);
    put('memory_used_mb', memory);
    put('power_w', power);
  }
  return values;
}

/**
 * The GPU indices CUDA_VISIBLE_DEVICES leaves visible (nvidia-smi lists every GPU of the machine, a managed
 * run holds some); undefined, all of them, when it is unset or names GPUs by UUID.
 */
function visibleGpus(value: string | undefined): Set<string> | undefined {
  if (value === undefined) return undefined;
  const ids = value
    .split(',')
    .map((id) => id.trim())
    .filter((id) => id !== '');
  if (!ids.every((id) => /^\d+$/.test(id))) return undefined;
  return new Set(ids.map((id) => String(Number(id))));
}

function round(value: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}
