import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const assayBin = path.join(repoRoot, 'bin/assay.js');

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  /** The HOME of the invocation: always a temp directory, so the real ~/.assay is never read or written. */
  home: string;
  env?: Record<string, string | undefined>;
  cwd?: string;
  /** Written to stdin, which is then closed (a script piping answers). */
  input?: string;
}

/** A fresh temp directory to serve as HOME. */
export function tempHome(): Promise<string> {
  return mkdtemp(path.join(tmpdir(), 'assay-cli-home-'));
}

/**
 * Starts `node bin/assay.js …` as a real process with only PATH, HOME and the given variables, so nothing of
 * the developer's SERVICE_* environment leaks in.
 */
export function spawnCli(
  args: string[],
  options: CliOptions,
): { child: ChildProcess; result: Promise<CliResult> } {
  const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: options.home };
  for (const [k, v] of Object.entries(options.env ?? {})) if (v !== undefined) env[k] = v;
  const child = spawn(process.execPath, [assayBin, ...args], {
    cwd: options.cwd ?? options.home,
    env,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d));
  child.stderr!.on('data', (d: Buffer) => (stderr += d));
  child.stdin!.end(options.input ?? '');
  const result = new Promise<CliResult>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  return { child, result };
}

/** Runs the CLI to its end. */
export function runCli(args: string[], options: CliOptions): Promise<CliResult> {
  return spawnCli(args, options).result;
}

/** Runs the CLI with --json and parses stdout; fails with the CLI's stderr when it did not exit 0. */
export async function cliJson<T = any>(args: string[], options: CliOptions): Promise<T> {
  const r = await runCli([...args, '--json'], options);
  if (r.code !== 0) throw new Error(`assay ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  return JSON.parse(r.stdout) as T;
}

/** Polls until `check` answers a value other than undefined, or fails after `timeoutMs`. */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 15_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
