import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { spawnProcessGroup } from './process-group.ts';

const repoRoot = path.resolve(import.meta.dirname, '../..');
/** Installed by scripts/setup-test-tools.sh at the version requirements-test-tools.txt pins (4.32.5). */
export const SCHEMATHESIS =
  process.env.SCHEMATHESIS_PATH ?? path.join(repoRoot, '.venv', 'bin', 'schemathesis');

/** The parts of schemathesis's JSON run report (`--report json`) the tests read. */
export interface SchemathesisReport {
  exit_code: number;
  stop_reason: string;
  complete: boolean;
  operations: { total: number; selected: number; tested: number; errored: number; skipped: number };
  test_cases: { generated: number; with_failures: number; unique_failures: number; errored: number };
  failures: unknown[];
  errors: unknown[];
  warnings: Record<string, unknown[]>;
}

export interface SchemathesisRun {
  exitCode: number | null;
  timedOut: boolean;
  durationMs: number;
  /** What it printed (stdout and stderr), long lines cut so a failure message stays readable. */
  output: string;
  report: SchemathesisReport | undefined;
  /** Where the JUnit and JSON reports were written (kept when the run failed). */
  reportDir: string;
}

/**
 * Runs `schemathesis --config-file <toml> run <args> --report json,junit` in a scratch directory (its
 * hypothesis database and cache land there, not in the repository) and stops it after `timeoutMs`.
 */
export async function runSchemathesis(
  configToml: string,
  args: string[],
  opts: { timeoutMs: number; name: string },
): Promise<SchemathesisRun> {
  const dir = await mkdtemp(path.join(tmpdir(), `assay-${opts.name}-`));
  const configFile = path.join(dir, 'schemathesis.toml');
  await writeFile(configFile, configToml);
  const reportDir = path.join(dir, 'report');
  const started = Date.now();
  const child = spawnProcessGroup(
    SCHEMATHESIS,
    [
      '--config-file',
      configFile,
      'run',
      ...args,
      '--no-color',
      '--report',
      'json,junit',
      '--report-dir',
      reportDir,
    ],
    {
      name: opts.name,
      cwd: dir,
      env: { PATH: process.env.PATH, HOME: dir, LANG: 'C.UTF-8', PYTHONUNBUFFERED: '1' },
      stopGraceMs: 2_000,
    },
  );
  let timer: NodeJS.Timeout | undefined;
  const timedOut = await Promise.race([
    child.exited.then(() => false),
    new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(true), opts.timeoutMs);
    }),
  ]);
  clearTimeout(timer);
  await child.stop(); // at once when it timed out; otherwise it only reaps what the group left behind
  const how = await child.exited;
  const exitCode = /code (\d+)/.exec(how)?.[1];
  const report = await readReport(reportDir);
  const output = child
    .output()
    .split('\n')
    .map((line) => (line.length > 1000 ? `${line.slice(0, 1000)}… (${line.length} characters)` : line))
    .join('\n');
  return {
    exitCode: exitCode === undefined ? null : Number(exitCode),
    timedOut,
    durationMs: Date.now() - started,
    output,
    report,
    reportDir,
  };
}

/** Removes a run's scratch directory (its config file holds the keys the run used). */
export async function discardRun(run: SchemathesisRun): Promise<void> {
  await rm(path.dirname(run.reportDir), { recursive: true, force: true });
}

async function readReport(dir: string): Promise<SchemathesisReport | undefined> {
  const files = await readdir(dir).catch(() => [] as string[]);
  const json = files.find((f) => f.endsWith('.json'));
  if (!json) return undefined;
  try {
    return JSON.parse(await readFile(path.join(dir, json), 'utf8')) as SchemathesisReport;
  } catch {
    return undefined; // cut short: a run stopped at its time limit leaves a partial report
  }
}

/** A TOML string (basic string: JSON's escapes are TOML's). */
export const tomlString = (value: string): string => JSON.stringify(value);
