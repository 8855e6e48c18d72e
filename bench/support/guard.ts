// Regression guards: a benchmark's `--guard` mode ends by printing one line per figure, read by
// bench/guard.ts, which compares it with the figure recorded in bench/guards.json.
export interface Guard {
  /** Stable name, the key in bench/guards.json (e.g. `heartbeats/pgbench`). */
  name: string;
  /** A ratio against a baseline measured in the same run, so the machine's speed cancels out. */
  ratio: number;
  /** True when a larger ratio is better (ours/baseline throughput); false for ours/baseline latency. */
  higherIsBetter: boolean;
  /** What the ratio is, in words: `Assay heartbeats/s ÷ pgbench tx/s`. */
  what: string;
}

export const GUARD_PREFIX = 'GUARD ';

/** Prints a guard line for bench/guard.ts (and a person reading the log). */
export function printGuard(guard: Guard): void {
  console.log(`${GUARD_PREFIX}${JSON.stringify(guard)}`);
}

/** Guard lines from a benchmark's output. */
export function parseGuards(output: string): Guard[] {
  return output
    .split('\n')
    .filter((line) => line.startsWith(GUARD_PREFIX))
    .map((line) => JSON.parse(line.slice(GUARD_PREFIX.length)) as Guard);
}

/**
 * Flagged when the ratio moved the wrong way by more than half against the recorded one (halved throughput
 * ratio, doubled latency ratio): noise on a shared 2-core machine moves them by less.
 */
export function regressed(guard: Guard, recorded: number): boolean {
  return guard.higherIsBetter ? guard.ratio < recorded / 2 : guard.ratio > recorded * 2;
}
