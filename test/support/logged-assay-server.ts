import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { repoRoot } from './assay-server.ts';
import { freePort, freePorts } from './free-port.ts';
import { spawnProcessGroup } from './process-group.ts';

export interface LoggedAssayServer {
  url: string;
  /** Everything the process wrote so far, whole (startAssayServer keeps only a 64 KiB tail). */
  stdout(): Promise<string>;
  stderr(): Promise<string>;
  stop(): Promise<void>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Runs `assay server` as a real process, as `npm start` does, with its stdout and stderr going whole to
 * `<logDir>/stdout.log` and `stderr.log` (the shell only redirects, then execs node).
 */
export async function startLoggedAssayServer(
  env: Record<string, string>,
  logDir: string,
): Promise<LoggedAssayServer> {
  const port = await freePort();
  const [temporalPort, temporalUiPort] = await freePorts(2);
  const out = path.join(logDir, 'stdout.log');
  const err = path.join(logDir, 'stderr.log');
  const child = spawnProcessGroup(
    '/bin/sh',
    [
      '-c',
      'exec "$0" "$@" >"$ASSAY_TEST_STDOUT" 2>"$ASSAY_TEST_STDERR"',
      process.execPath,
      path.join(repoRoot, 'bin/assay.js'),
      'server',
    ],
    {
      name: 'assay server',
      cwd: repoRoot,
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        // One process unless the test asks for HTTP workers, as startAssayServer.
        ASSAY_WORKERS: '1',
        ASSAY_TEMPORAL_PORT: String(temporalPort),
        ASSAY_TEMPORAL_UI_PORT: String(temporalUiPort),
        ...env,
        PORT: String(port),
        ASSAY_TEST_STDOUT: out,
        ASSAY_TEST_STDERR: err,
      },
      stopGraceMs: 10_000,
    },
  );
  const url = `http://127.0.0.1:${port}`;
  const read = (file: string) => readFile(file, 'utf8').catch(() => '');
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (!child.isRunning())
      throw new Error(
        `assay server ${await child.exited} before it was ready:\n${await read(out)}\n${await read(err)}`,
      );
    if (
      await fetch(`${url}/readyz`).then(
        (r) => r.ok,
        () => false,
      )
    )
      break;
    if (Date.now() > deadline) {
      await child.stop();
      throw new Error(`assay server not ready within 120 s:\n${await read(out)}\n${await read(err)}`);
    }
    await sleep(200);
  }
  return { url, stdout: () => read(out), stderr: () => read(err), stop: () => child.stop() };
}
