// Latency percentiles, and the memory and CPU of a server's process group, for the runner-traffic benchmark.
import { readdir, readFile } from 'node:fs/promises';

/** Every latency of a phase (milliseconds), kept whole: a phase has at most a few hundred thousand. */
export class Latencies {
  #values: number[] = [];
  #sorted = true;

  add(ms: number): void {
    this.#values.push(ms);
    this.#sorted = false;
  }

  get count(): number {
    return this.#values.length;
  }

  /** The q-quantile (0..1) by nearest rank; NaN when empty. */
  quantile(q: number): number {
    if (this.#values.length === 0) return Number.NaN;
    if (!this.#sorted) {
      this.#values.sort((a, b) => a - b);
      this.#sorted = true;
    }
    const rank = Math.min(this.#values.length - 1, Math.max(0, Math.ceil(q * this.#values.length) - 1));
    return this.#values[rank]!;
  }
}

const PAGE = 4096;
/** USER_HZ: the unit of utime and stime in /proc/<pid>/stat, 100 on every Linux we run on. */
const TICKS_PER_S = 100;

/**
 * The processes of the process group `pgid` (a full /proc scan: costly on a busy machine, so done rarely).
 */
export async function groupPids(pgid: number): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = await readFile(`/proc/${entry}/stat`, 'utf8');
      // Fields after the command name (which may hold spaces): state ppid pgrp …
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]) === pgid) pids.push(Number(entry));
    } catch {
      // The process ended between the listing and the read.
    }
  }
  return pids;
}

async function rssOf(pids: readonly number[]): Promise<number> {
  let rss = 0;
  for (const pid of pids) {
    try {
      rss += Number((await readFile(`/proc/${pid}/statm`, 'utf8')).split(' ')[1]) * PAGE;
    } catch {
      // Ended meanwhile.
    }
  }
  return rss;
}

export interface Usage {
  rss: number;
  /** CPU time used so far (all threads). */
  cpuS: number;
  /** Main threads only (/proc/<pid>/schedstat): time on a core, and time runnable but waiting for one. */
  runS: number;
  waitS: number;
}

/** Resident memory (bytes), CPU time and scheduler waits of every process in the process group `pgid`. */
export async function groupUsage(pgid: number): Promise<Usage> {
  let rss = 0;
  let ticks = 0;
  let runNs = 0;
  let waitNs = 0;
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = await readFile(`/proc/${entry}/stat`, 'utf8');
      // Fields after the command name (which may hold spaces): state ppid pgrp … utime (12th) stime (13th)
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) !== pgid) continue;
      ticks += Number(fields[11]) + Number(fields[12]);
      const statm = await readFile(`/proc/${entry}/statm`, 'utf8');
      rss += Number(statm.split(' ')[1]) * PAGE;
      const [run, wait] = (await readFile(`/proc/${entry}/schedstat`, 'utf8')).split(' ').map(Number);
      runNs += run ?? 0;
      waitNs += wait ?? 0;
    } catch {
      // The process ended between the listing and the read.
    }
  }
  return { rss, cpuS: ticks / TICKS_PER_S, runS: runNs / 1e9, waitS: waitNs / 1e9 };
}

/**
 * Samples a process group's RSS every 250 ms; `peak()` is the highest seen. The group's members are looked up
 * every 5 s only, so the sampler costs the load client (and the cores
 * it shares with the server) next to nothing.
 */
export function rssSampler(pgid: number) {
  let peak = 0;
  let last = 0;
  let busy = false;
  let ticks = 0;
  let pids: number[] = [];
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    (async () => {
      if (ticks++ % 20 === 0) pids = await groupPids(pgid);
      last = await rssOf(pids);
      peak = Math.max(peak, last);
    })()
      .catch(() => {})
      .finally(() => (busy = false));
  }, 250);
  timer.unref();
  return {
    peak: () => Math.max(peak, last),
    stop: () => clearInterval(timer),
  };
}
