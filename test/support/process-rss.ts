import { readFileSync } from 'node:fs';

const MiB = 1024 * 1024;

/** Resident set size of a live process, in bytes, from /proc/<pid>/status (VmRSS). */
export function rssBytes(pid: number): number {
  const kib = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  if (kib === undefined) throw new Error(`no VmRSS for process ${pid}`);
  return Number(kib) * 1024;
}

export const mib = (bytes: number) => `${(bytes / MiB).toFixed(1)} MiB`;

/** Samples a process's RSS on an interval, keeping the peak and named marks (start, warm, end…). */
export class RssSampler {
  readonly marks = new Map<string, number>();
  peak = 0;
  /** Every sample, as [epoch ms, bytes]. */
  readonly samples: [number, number][] = [];
  private readonly pid: number;
  private readonly startedAt: number;
  private readonly timer: NodeJS.Timeout;

  constructor(pid: number, intervalMs = 1_000) {
    this.pid = pid;
    this.startedAt = Date.now();
    this.sample();
    // A process that died between samples is the test's to report, not an uncaught error here.
    this.timer = setInterval(() => {
      try {
        this.sample();
      } catch {
        this.stop();
      }
    }, intervalMs);
    this.timer.unref();
  }

  /** Takes a sample now and keeps it under `name`. */
  mark(name: string): number {
    const rss = this.sample();
    this.marks.set(name, rss);
    return rss;
  }

  /** The highest sample taken between two instants (epoch ms). */
  peakBetween(from: number, to: number): number {
    return Math.max(0, ...this.samples.filter(([at]) => at >= from && at <= to).map(([, rss]) => rss));
  }

  /** One sample every `everyMs`, as `12s:301` (MiB): the shape of the curve in one line. */
  trajectory(everyMs = 10_000): string {
    const picked: string[] = [];
    let next = 0;
    for (const [at, rss] of this.samples) {
      if (at < next) continue;
      picked.push(`${Math.round((at - this.startedAt) / 1000)}s:${Math.round(rss / MiB)}`);
      next = at + everyMs;
    }
    return picked.join(' ');
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private sample(): number {
    const rss = rssBytes(this.pid);
    this.samples.push([Date.now(), rss]);
    this.peak = Math.max(this.peak, rss);
    return rss;
  }
}
