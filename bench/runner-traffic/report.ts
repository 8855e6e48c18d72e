// The benchmark's figures as markdown: printed as they come, and written whole to bench/results/.
import type { HeartbeatResult, PhaseResult } from './load.ts';
import type { PgbenchResult } from './pgbench.ts';

export interface ServerFigures {
  label: string;
  heartbeats: HeartbeatResult;
  /** Absent with --heartbeats-only. */
  lifecycles?: PhaseResult;
  /** RSS of the server's whole process group (bytes): right after setup, and the peak under load. */
  rssIdle: number;
  rssPeak: number;
  /** Requests one lifecycle sends. */
  lifecycleRequests: number;
}

export interface Row {
  runners: number;
  assay?: ServerFigures | { skipped: string };
  /** The --compare-root server (e.g. the base commit's), measured right before ours. */
  compared?: ServerFigures | { skipped: string };
  mlflow?: ServerFigures | { skipped: string };
  pgbench?: PgbenchResult | { skipped: string };
}

/** pgbench's own CPU is the client's: its split's "server" is the pgbench process. */
function pgbenchCpuLine({ cores: c, msPerOp: m }: NonNullable<PhaseResult['cpu']>): string {
  return `| pgbench | heartbeat UPDATE | — / ${cores(c.postgres)} / ${cores(c.server)} / ${cores(c.other + c.client)} | — / ${ms(m.postgres)} / ${ms(m.server)} | — |`;
}

const skipped = (x: object): x is { skipped: string } => 'skipped' in x;

const num = (x: number) =>
  Number.isFinite(x) ? (x >= 100 ? Math.round(x).toLocaleString('en-US') : x.toFixed(1)) : 'n/a';
const ms = (x: number) => (Number.isFinite(x) ? `${x < 10 ? x.toFixed(2) : x.toFixed(1)} ms` : 'n/a');
const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MiB`;
const ratio = (a: number, b: number) => (Number.isFinite(a / b) && b > 0 ? a / b : Number.NaN);
const times = (x: number) => (Number.isFinite(x) ? `${x.toFixed(2)}×` : 'n/a');
const errorsOf = (...phases: PhaseResult[]) => phases.reduce((sum, p) => sum + p.errors, 0);

/** Server CPU per operation and the cores it kept busy meanwhile: 1.0 is one core flat out. */
const cpu = (p: PhaseResult) =>
  p.cpu ? `${ms(p.cpu.msPerOp.server)} (${p.cpu.cores.server.toFixed(2)} cores)` : 'n/a';
const cores = (x: number) => x.toFixed(2);

/**
 * One line of the CPU table: who kept the cores busy during a phase, and the CPU each spent per operation.
 */
function cpuLine(label: string, phase: string, p: PhaseResult): string | undefined {
  if (!p.cpu) return undefined;
  const { cores: c, msPerOp: m, serverWaiting } = p.cpu;
  return `| ${label} | ${phase} | ${cores(c.server)} / ${cores(c.postgres)} / ${cores(c.client)} / ${cores(c.other)} | ${ms(m.server)} / ${ms(m.postgres)} / ${ms(m.client)} | ${Math.round(100 * serverWaiting)} % |`;
}

function serverLine(f: ServerFigures, runners: number): string {
  const h = f.heartbeats;
  const l = f.lifecycles;
  const errors = errorsOf(h, ...(l ? [l] : []));
  const lifecycle = l
    ? `${num(l.perSecond)} (${f.lifecycleRequests} req.) | ${ms(l.p50Ms)} / ${ms(l.p99Ms)} | ${cpu(l)}`
    : '— | — | —';
  return `| ${f.label} | ${runners} | ${num(h.perSecond)} | ${ms(h.p50Ms)} / ${ms(h.p99Ms)} | ${cpu(h)} | ${lifecycle} | ${mib(f.rssIdle)} → ${mib(f.rssPeak)} | ${errors} |`;
}

/** One section per runner count: the table, then the ratios against the goals. */
export function section(row: Row, seconds: number, heartbeatRuns?: number): string {
  const over =
    heartbeatRuns === undefined ? '' : ` over ${heartbeatRuns.toLocaleString('en-US')} running runs`;
  const lines = [
    `### ${row.runners.toLocaleString('en-US')} runners${over}, ${seconds} s per phase`,
    '',
    '| Server | Clients | Heartbeats/s | Heartbeat p50 / p99 | Server CPU per heartbeat | Lifecycles/s | Lifecycle p50 / p99 | Server CPU per lifecycle | RSS idle → peak | Errors |',
    '|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|',
  ];
  if (row.compared && !skipped(row.compared)) lines.push(serverLine(row.compared, row.runners));
  if (row.assay && !skipped(row.assay)) lines.push(serverLine(row.assay, row.runners));
  if (row.mlflow && !skipped(row.mlflow)) lines.push(serverLine(row.mlflow, row.runners));
  if (row.pgbench && !skipped(row.pgbench)) {
    const p = row.pgbench;
    const capped = p.clients < row.runners ? ` (capped from ${row.runners})` : '';
    lines.push(
      `| pgbench: the heartbeat's UPDATE | ${p.clients}${capped} | ${num(p.perSecond)} | ${ms(p.p50Ms)} / ${ms(p.p99Ms)} | — | — | — | — | — | ${p.errors} |`,
    );
  }
  lines.push('');
  const measured = [row.compared, row.assay, row.mlflow].filter(
    (f): f is ServerFigures => f !== undefined && !skipped(f),
  );
  if (measured.length > 0) {
    lines.push(
      "CPU during each phase: cores busy for the server / its database's PostgreSQL backends / this load client / the rest of",
      'the machine (other users included), the CPU each of the first three spent per operation, and how much of the time',
      "the server's main threads were runnable they spent waiting for a core (high: the machine, not the server, is the bound).",
      "MLflow opens and closes PostgreSQL connections all the time (SQLAlchemy's default pool: 5 kept, 10 more per worker",
      'opened on demand); a backend\'s CPU is lost when it exits, so MLflow\'s PostgreSQL share lands under "rest".',
      '',
      '| Server | Phase | Cores: server / PostgreSQL / client / rest | CPU per op: server / PostgreSQL / client | Server waiting for a core |',
      '|---|---|--:|--:|--:|',
      ...measured
        .flatMap((f) => [
          cpuLine(f.label, 'heartbeats', f.heartbeats),
          f.lifecycles && cpuLine(f.label, 'lifecycles', f.lifecycles),
        ])
        .filter((l): l is string => typeof l === 'string'),
      ...(row.pgbench && !skipped(row.pgbench) && row.pgbench.cpu ? [pgbenchCpuLine(row.pgbench.cpu)] : []),
      '',
    );
  }
  for (const other of [row.compared, row.assay, row.mlflow, row.pgbench])
    if (other && skipped(other)) lines.push(`- ${other.skipped}`);
  const a = row.assay && !skipped(row.assay) ? row.assay : undefined;
  if (a && row.mlflow && !skipped(row.mlflow)) {
    const hb = ratio(a.heartbeats.perSecond, row.mlflow.heartbeats.perSecond);
    const lc = ratio(a.lifecycles?.perSecond ?? Number.NaN, row.mlflow.lifecycles?.perSecond ?? Number.NaN);
    lines.push(
      `- ours/MLflow: heartbeats ${times(hb)}, lifecycles ${times(lc)} (goal ≥ 10×: ${hb >= 10 && lc >= 10 ? 'met' : 'not met'})`,
    );
    const m = row.mlflow;
    if (a.heartbeats.cpu && a.lifecycles?.cpu && m.heartbeats.cpu && m.lifecycles?.cpu) {
      const hbCpu = ratio(m.heartbeats.cpu.msPerOp.server, a.heartbeats.cpu.msPerOp.server);
      const lcCpu = ratio(m.lifecycles.cpu.msPerOp.server, a.lifecycles.cpu.msPerOp.server);
      lines.push(
        `- server CPU per operation, MLflow/ours (independent of who got the cores): heartbeats ${times(hbCpu)}, lifecycles ${times(lcCpu)}`,
      );
    }
  }
  const c = row.compared && !skipped(row.compared) ? row.compared : undefined;
  if (a && c) {
    const hb = ratio(a.heartbeats.perSecond, c.heartbeats.perSecond);
    const lc = ratio(a.lifecycles?.perSecond ?? Number.NaN, c.lifecycles?.perSecond ?? Number.NaN);
    const pgCpu = ratio(
      c.heartbeats.cpu?.msPerOp.postgres ?? Number.NaN,
      a.heartbeats.cpu?.msPerOp.postgres ?? Number.NaN,
    );
    lines.push(
      `- ours/${c.label}: heartbeats ${times(hb)}${a.lifecycles ? `, lifecycles ${times(lc)}` : ''}; PostgreSQL CPU per heartbeat, ${c.label}/ours: ${times(pgCpu)}`,
    );
    if (row.mlflow && !skipped(row.mlflow) && c.lifecycles && row.mlflow.lifecycles)
      lines.push(
        `- ${c.label}/MLflow: heartbeats ${times(ratio(c.heartbeats.perSecond, row.mlflow.heartbeats.perSecond))}, lifecycles ${times(ratio(c.lifecycles.perSecond, row.mlflow.lifecycles.perSecond))}`,
      );
    if (row.pgbench && !skipped(row.pgbench)) {
      const pg = ratio(c.heartbeats.perSecond, row.pgbench.perSecond);
      lines.push(`- ${c.label}/pgbench: heartbeats ${times(pg)}, p99 ${ms(c.heartbeats.p99Ms)}`);
    }
  }
  if (a && row.pgbench && !skipped(row.pgbench)) {
    const pg = ratio(a.heartbeats.perSecond, row.pgbench.perSecond);
    const p99 = a.heartbeats.p99Ms;
    lines.push(
      `- ours/pgbench: heartbeats ${times(pg)}, our p99 ${ms(p99)} (goal ≥ 1.0× with p99 ≤ 50 ms: ${pg >= 1 && p99 <= 50 ? 'met' : 'not met'})`,
    );
  }
  for (const f of [c, a, row.mlflow]) {
    if (!f || skipped(f)) continue;
    const first = f.heartbeats.firstError ?? f.lifecycles?.firstError;
    if (first) lines.push(`- ${f.label}: first error: ${first}`);
  }
  return lines.join('\n') + '\n';
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length === 0 ? Number.NaN : s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

/**
 * The pairs (our server at one worker count, then pgbench on its database) of one runner count, per worker
 * count: each pair's ours/pgbench, their median, our median p99, and the CPU a heartbeat cost (the service's
 * processes + PostgreSQL) beside what pgbench's transaction cost (pgbench itself + PostgreSQL).
 */
export function pairsSummary(
  runners: number,
  measured: ReadonlyArray<{ workers: number; row: Row }>,
): { text: string; ratios: { workers: number; ratio: number }[] } {
  const lines = [
    `### ${runners.toLocaleString('en-US')} runners: ours/pgbench by worker count (median of the pairs)`,
    '',
    '| `--workers` | ours/pgbench, each pair | Median | Our p99 (median) | CPU per heartbeat: service + PostgreSQL | pgbench CPU per tx: pgbench + PostgreSQL | Goal ≥ 1.0× with p99 ≤ 50 ms |',
    '|--:|--:|--:|--:|--:|--:|---|',
  ];
  const ratios: { workers: number; ratio: number }[] = [];
  for (const workers of [...new Set(measured.map((m) => m.workers))]) {
    const pairs = measured
      .filter((m) => m.workers === workers)
      .flatMap(({ row }) =>
        row.assay && !skipped(row.assay) && row.pgbench && !skipped(row.pgbench)
          ? [{ a: row.assay.heartbeats, p: row.pgbench }]
          : [],
      );
    if (pairs.length === 0) continue;
    const each = pairs.map(({ a, p }) => ratio(a.perSecond, p.perSecond));
    const r = median(each);
    const p99 = median(pairs.map(({ a }) => a.p99Ms));
    const ours = median(pairs.map(({ a }) => (a.cpu ? a.cpu.msPerOp.server + a.cpu.msPerOp.postgres : NaN)));
    const oursSplit = `${ms(median(pairs.map(({ a }) => a.cpu?.msPerOp.server ?? NaN)))} + ${ms(median(pairs.map(({ a }) => a.cpu?.msPerOp.postgres ?? NaN)))}`;
    const theirs = median(
      pairs.map(({ p }) => (p.cpu ? p.cpu.msPerOp.server + p.cpu.msPerOp.postgres : NaN)),
    );
    const theirsSplit = `${ms(median(pairs.map(({ p }) => p.cpu?.msPerOp.server ?? NaN)))} + ${ms(median(pairs.map(({ p }) => p.cpu?.msPerOp.postgres ?? NaN)))}`;
    lines.push(
      `| ${workers} | ${each.map(times).join(', ')} | ${times(r)} | ${ms(p99)} | ${ms(ours)} (${oursSplit}) | ${ms(theirs)} (${theirsSplit}) | ${r >= 1 && p99 <= 50 ? 'met' : 'not met'} |`,
    );
    ratios.push({ workers, ratio: r });
  }
  return { text: `${lines.join('\n')}\n`, ratios };
}
