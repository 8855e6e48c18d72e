import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { repoRoot, startAssayServer, takeBootstrapKey, type AssayServer } from '../support/assay-server.ts';
import { freePort } from '../support/free-port.ts';
import { createTestDatabase } from '../support/postgres.ts';
import { shellQuote, TmuxSession } from '../support/tmux.ts';

const run = promisify(execFile);

async function readmeBlock(name: string): Promise<string> {
  const readme = await readFile(path.join(repoRoot, 'README.md'), 'utf8');
  const block = new RegExp(
    `<!-- ${name}:start -->\\s*\`\`\`bash\\n([\\s\\S]*?)\`\`\`\\s*<!-- ${name}:end -->`,
  ).exec(readme);
  assert.ok(block, `README.md must hold the ${name} block between its markers`);
  return block[1]!;
}

for (const backend of ['embedded PGlite', 'PostgreSQL'] as const) {
  describe(`README walkthrough on ${backend}`, () => {
    let dataDir: string;
    let database: Awaited<ReturnType<typeof createTestDatabase>> | undefined;
    let env: Record<string, string>;
    let server: AssayServer;

    before(async () => {
      dataDir = await mkdtemp(path.join(tmpdir(), 'assay-readme-'));
      database = backend === 'PostgreSQL' ? await createTestDatabase() : undefined;
      env = { ASSAY_DATA_DIR: dataDir, ...(database ? { DATABASE_URL: database.url } : {}) };
      server = await startAssayServer(env);
    });
    after(async () => {
      await server?.stop();
      await database?.drop();
      await rm(dataDir, { recursive: true, force: true });
    });

    it('hands the bootstrap admin key over in a file of the data directory, never in its output', async () => {
      assert.match(server.bootstrapKey ?? '', /^sk_user_[0-9a-f]{32}[A-Za-z0-9_-]{43}$/);
      const output = server.process.output();
      assert.equal(output.match(/bootstrap admin key written to /g)?.length, 1);
      assert.ok(output.includes(path.join(dataDir, 'bootstrap-admin-key')), output);
      assert.ok(!output.includes(server.bootstrapKey!), 'the key is in the output');
      assert.equal(await takeBootstrapKey(env), undefined, 'the key can be taken once');
    });

    it('runs the walkthrough as written, ending with a succeeded run', async () => {
      const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', await readmeBlock('walkthrough')], {
        env: { ...process.env, KEY: server.bootstrapKey!, ASSAY_URL: server.url },
        timeout: 60_000,
      });
      const lines = stdout.trim().split('\n');
      assert.ok(lines.includes('committed'), stdout);
      assert.ok(lines.includes('running'), stdout);
      assert.ok(
        lines.some((l) => l.includes('"state":"succeeded"')),
        stdout,
      );
      assert.equal(lines.at(-1), '{"pending":0,"running":0,"succeeded":1,"failed":0}');
    });

    it('runs the asset upload example as written', async () => {
      const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', await readmeBlock('assets')], {
        env: { ...process.env, KEY: server.bootstrapKey!, ASSAY_URL: server.url },
        timeout: 60_000,
      });
      assert.deepEqual(stdout.trim().split('\n'), ['ready', 'ready']);
    });

    it('runs the metrics example as written: a Python program logs through assay run, read back three ways', async () => {
      const home = await mkdtemp(path.join(tmpdir(), 'assay-readme-home-'));
      try {
        const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', await readmeBlock('metrics')], {
          env: { ...process.env, HOME: home, KEY: server.bootstrapKey!, ASSAY_URL: server.url },
          cwd: repoRoot,
          timeout: 120_000,
        });
        const lines = stdout.trim().split('\n');
        assert.ok(
          lines.some((l) => /^loss\s+100\s+99\s+0\.01\s+0\.01\s+1$/.test(l)),
          stdout,
        );
        assert.ok(lines.includes('{"key":"loss","count":100,"last":0.01,"min":0.01,"max":1}'), stdout);
        assert.ok(lines.includes('{"key":"lr","count":100,"last":0.1,"min":0.1,"max":0.1}'), stdout);
        assert.ok(lines.includes('{"key":"loss","count":100,"downsampled":true}'), stdout);
        assert.equal(lines.at(-1), '{"r":1,"loss":0.01}');
      } finally {
        await rm(home, { recursive: true, force: true });
      }
    });

    it('runs the managed-runs example as written: Temporal, the worker and the local provider, embedded', async () => {
      assert.match(server.process.output(), /Temporal UI: http:\/\/127\.0\.0\.1:\d+/);
      const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', await readmeBlock('managed')], {
        env: { ...process.env, KEY: server.bootstrapKey!, ASSAY_URL: server.url },
        timeout: 120_000,
      });
      const lines = stdout.trim().split('\n');
      assert.ok(
        lines.some((l) => /^run-[0-9a-f-]+-1-1$/.test(l)),
        stdout,
      );
      assert.ok(lines.includes('{"state":"succeeded","managed":true,"instance":"local"}'), stdout);
      assert.ok(lines.includes('loss.txt ready'), stdout);
      assert.equal(lines.at(-1), '{"total":4,"succeeded":4,"failed":0}');
    });

    it('creates a user with `assay admin create-user`, whose key works', async () => {
      const { stdout } = await run(
        process.execPath,
        [
          path.join(repoRoot, 'bin/assay.js'),
          'admin',
          'create-user',
          '--email',
          'ada@example.org',
          '--server-url',
          server.url,
        ],
        {
          env: { ...process.env, SERVICE_API_KEY: server.bootstrapKey! },
        },
      );
      const key = /api key: (sk_user_\S+)/.exec(stdout)?.[1];
      assert.ok(key, stdout);
      const me = await fetch(`${server.url}/v1/me`, { headers: { authorization: `Bearer ${key}` } });
      assert.equal(((await me.json()) as { email: string }).email, 'ada@example.org');
    });

    it('never hands out a bootstrap key again on later starts', async () => {
      await server.stop();
      server = await startAssayServer(env);
      assert.equal(server.bootstrapKey, undefined);
      assert.doesNotMatch(server.process.output(), /bootstrap admin key/);
    });
  });
}

describe('first start in a terminal', () => {
  let dataDir: string;
  let session: TmuxSession | undefined;
  before(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'assay-tty-'));
  });
  after(async () => {
    await session?.kill();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('prints readable lines, the bootstrap admin key (which signs in) and where the web UI is; keeps the key file', async () => {
    const port = await freePort();
    const env = { ASSAY_DATA_DIR: dataDir, PORT: String(port), ASSAY_ORCHESTRATOR: 'off' };
    const vars = Object.entries(env).map(([k, v]) => `${k}=${shellQuote(v)}`);
    const cli = [process.execPath, path.join(repoRoot, 'bin/assay.js'), 'server'].map(shellQuote);
    session = await TmuxSession.start(`assay-tty-${process.pid}`, `env ${[...vars, ...cli].join(' ')}`);
    const screen = await session.waitFor(/Web UI: open \S+ and sign in/, 90_000);
    const key = /bootstrap admin key: (sk_user_\S+)/.exec(screen)?.[1];
    assert.ok(key, screen);
    // Lines for a person: pino-pretty's, not JSON, ending with where the UI is and what to sign in with.
    assert.match(screen, /INFO.*Assay listening on/, screen);
    assert.doesNotMatch(screen, /\{"level":/, screen);
    assert.match(
      screen,
      new RegExp(
        `Web UI: open http://127\\.0\\.0\\.1:${port}/ui/ and sign in with the bootstrap admin key printed above`,
      ),
    );
    const page = await fetch(`http://127.0.0.1:${port}/ui/`);
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
    const me = await fetch(`http://127.0.0.1:${port}/v1/me`, { headers: { authorization: `Bearer ${key}` } });
    assert.equal(me.status, 200);
    assert.equal(await takeBootstrapKey(env), key);
  });
});
