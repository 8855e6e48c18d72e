// Figures and the markdown block each benchmark prints and writes to bench/results/.
import { readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

const MIB = 1024 * 1024;

/** The q-quantile (0–1) of some numbers, nearest-rank. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

/** The median, the mean of the middle two for an even count. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export const ms = (value: number) =>
  value >= 100 ? value.toFixed(0) : value >= 10 ? value.toFixed(1) : value.toFixed(2);
export const mib = (bytes: number) => `${(bytes / MIB).toFixed(1)} MiB`;
/** Decimal megabytes per second, as storage and network tools report them. */
export const mbps = (bytes: number, seconds: number) => (bytes / 1e6 / seconds).toFixed(1);

/** Named command-line options `--name value`, with defaults; anything unknown is an error. */
export function options<T extends Record<string, number>>(argv: readonly string[], defaults: T): T {
  const out: Record<string, number> = { ...defaults };
  for (let i = 0; i < argv.length; i += 2) {
    const name = argv[i]!.replace(/^--/, '');
    const value = Number(argv[i + 1]);
    if (!(name in defaults) || !Number.isFinite(value))
      throw new Error(
        `usage: ${Object.keys(defaults)
          .map((k) => `[--${k} N]`)
          .join(' ')}; got ${argv.slice(i, i + 2).join(' ')}`,
      );
    out[name] = value;
  }
  return out as T;
}

/** Machine, date and load: the lines every result starts with. */
export function machine(): string {
  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  const load = os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' / ');
  return `${os.cpus().length} cores (${cpu}), ${(os.totalmem() / 1024 ** 3).toFixed(0)} GiB, ${os.type()} ${os.release()}, Node ${process.version}; load average at the end ${load} (1/5/15 min)`;
}

/** VmRSS (current) or VmHWM (peak) of a process, in bytes; undefined once it has exited. */
export function procMemory(pid: number | 'self', field: 'VmRSS' | 'VmHWM'): number | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1];
    return kb === undefined ? undefined : Number(kb) * 1024;
  } catch {
    return undefined;
  }
}

/** A markdown table from a header row and body rows. */
export function table(header: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const line = (cells: readonly string[]) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

/** Prints the block and writes it to bench/results/<name>.md. */
export async function publish(name: string, markdown: string): Promise<void> {
  const dir = path.join(import.meta.dirname, '..', 'results');
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, `${name}.md`), `${markdown.trimEnd()}\n`);
  console.log(`\n${markdown}\nwritten to bench/results/${name}.md`);
}
