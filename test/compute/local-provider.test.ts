// The local provider with a stand-in runner: the real `assay run` needs a service, this one proves
// what arrives.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, describe, test } from 'node:test';
import { ProvisionRefusedError, type ProvisionRequest } from '../../src/compute/compute-provider.ts';
import { LocalProvider, type LocalProviderOptions } from '../../src/compute/local-provider.ts';

const root = mkdtempSync(path.join(tmpdir(), 'assay-local-provider-'));
const stateDir = path.join(root, 'state');
// Writes what the runner saw, then runs the launch command like `assay run -- …` would.
const runnerArgv = [
  'bash',
  '-c',
  'echo "$SERVICE_RUN $SERVICE_EXPERIMENT_ID" > "$OUT_DIR/runner"; exec "$@"',
  'runner',
];
const started: number[] = [];

function provider(graceMs = 2_000, options: Partial<LocalProviderOptions> = {}) {
  return new LocalProvider({ stateDir, runnerArgv, graceMs, ...options });
}

const ADMIN = { id: '00000000-0000-4000-8000-000000000001', email: 'admin@example.test', is_admin: true };

/** A run whose command leaves a background child (to prove the whole group dies) and then waits. */
function request(
  key: string,
  command = 'sleep 300 & echo $! > "$OUT_DIR/child"; echo started > "$OUT_DIR/started"; wait',
): ProvisionRequest & { out: string } {
  const out = path.join(root, key);
  return {
    out,
    idempotencyKey: key,
    env: {
      SERVICE_SERVER_URL: 'http://127.0.0.1:1',
      SERVICE_EXCHANGE_TOKEN: 'sk-never-logged',
      SERVICE_EXPERIMENT_ID: 'exp-1',
      SERVICE_VARIATION: '1',
      SERVICE_RUN: '7',
    },
    launch: { command, env: { OUT_DIR: out, SERVICE_RUN: 'overridden?' } },
    tags: {},
    provisionedByAdmin: true,
    launchAuthor: ADMIN,
  };
}

async function waitForFile(file: string): Promise<string> {
  for (let i = 0; i < 200; i++) {
    if (existsSync(file)) {
      const text = readFileSync(file, 'utf8');
      if (text.endsWith('\n')) return text.trim();
    }
    await sleep(25);
  }
  throw new Error(`${file} never appeared`);
}

/** Running, not merely a zombie waiting for init to reap it. */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^[ZX]$/.test(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0]!);
  } catch {
    return false;
  }
}

async function provisionStarted(p: LocalProvider, req: ReturnType<typeof request>) {
  mkdirSync(req.out, { recursive: true });
  const instance = await p.provision(req);
  started.push(Number(instance.instanceId.slice('pid-'.length)));
  await waitForFile(path.join(req.out, 'started'));
  return instance;
}

describe('local compute provider', () => {
  after(() => {
    // Nothing may outlive the file, whatever failed.
    for (const pid of started) {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    rmSync(root, { recursive: true, force: true });
  });

  test('runs the command under the runner with the injected variables, once per key', async () => {
    const p = provider();
    const req = request('run-exp-1-1-7');
    const instance = await provisionStarted(p, req);
    assert.equal(instance.provider, 'local');
    assert.equal(instance.state, 'running');
    // The injected SERVICE_RUN wins over launch_config.env.
    assert.equal(await waitForFile(path.join(req.out, 'runner')), '7 exp-1');
    assert.deepEqual(await p.describe(req.idempotencyKey), instance);
    assert.deepEqual(await p.provision(req), instance);
    assert.deepEqual(await Promise.all([p.provision(req), p.provision(req)]), [instance, instance]);

    const child = Number(await waitForFile(path.join(req.out, 'child')));
    assert.equal(alive(child), true);
    await p.terminate(req.idempotencyKey);
    assert.equal(alive(child), false, 'the background child died with the group');
    assert.equal(await p.describe(req.idempotencyKey), undefined);
    await p.terminate(req.idempotencyKey);
    // A finished instance is still the answer: the run is not started again.
    assert.deepEqual(await p.provision(req), { ...instance, state: 'terminated' });
    assert.doesNotMatch(readFileSync(path.join(stateDir, 'local-instances.json'), 'utf8'), /sk-never-logged/);
  });

  test('replaceEnded starts an ended instance again in its place, and leaves a live one be', async () => {
    const p = provider();
    const live = request('run-exp-1-1-20');
    const instance = await provisionStarted(p, live);
    assert.deepEqual(await p.provision({ ...live, replaceEnded: true }), instance);

    const ended = request('run-exp-1-1-21', 'echo started >> "$OUT_DIR/started"');
    const hasEnded = async () => {
      for (let i = 0; (await p.describe(ended.idempotencyKey)) !== undefined; i++) {
        assert.ok(i < 200, 'the instance ended');
        await sleep(25);
      }
    };
    const first = await provisionStarted(p, ended);
    await hasEnded();
    assert.deepEqual(await p.provision(ended), { ...first, state: 'terminated' });
    const second = await p.provision({ ...ended, replaceEnded: true });
    started.push(Number(second.instanceId.slice('pid-'.length)));
    assert.notEqual(second.instanceId, first.instanceId);
    for (let i = 0; readFileSync(path.join(ended.out, 'started'), 'utf8') !== 'started\nstarted\n'; i++) {
      assert.ok(i < 200, 'the new instance ran the command');
      await sleep(25);
    }
    await hasEnded();
    assert.deepEqual(await provider().provision(ended), { ...second, state: 'terminated' });
  });

  test('another provider on the same state dir finds and terminates the instance', async () => {
    const req = request('run-exp-1-1-8');
    const instance = await provisionStarted(provider(), req);
    const restarted = provider();
    assert.deepEqual(await restarted.describe(req.idempotencyKey), instance);
    assert.deepEqual(await restarted.provision(req), instance);
    await restarted.terminate(req.idempotencyKey);
    assert.equal(await provider().describe(req.idempotencyKey), undefined);
  });

  test('kills a group that ignores SIGTERM once the grace is over', async () => {
    const req = request(
      'run-exp-1-1-9',
      'trap "" TERM; echo started > "$OUT_DIR/started"; while :; do sleep 0.1; done',
    );
    const p = provider(300);
    await provisionStarted(p, req);
    const t0 = Date.now();
    await p.terminate(req.idempotencyKey);
    assert.ok(Date.now() - t0 >= 250);
    assert.equal(await p.describe(req.idempotencyKey), undefined);
  });

  test('unknown keys: nothing to describe, terminate succeeds', async () => {
    assert.equal(await provider().describe('run-nope'), undefined);
    await provider().terminate('run-nope');
  });

  test('a command that cannot start fails provision and leaves no record', async () => {
    const p = new LocalProvider({ stateDir, runnerArgv: [path.join(root, 'no-such-runner')] });
    await assert.rejects(p.provision(request('run-exp-1-1-10')), /ENOENT/);
    assert.equal(await p.describe('run-exp-1-1-10'), undefined);
  });

  test("the instance sees PATH, HOME, the locale and its own variables, never the service's secrets", async () => {
    const secrets = {
      DATABASE_URL: 'postgres://assay:db-secret@db/assay',
      S3_SECRET_ACCESS_KEY: 's3-secret',
      AWS_SECRET_ACCESS_KEY: 'aws-secret',
      ASSAY_ORCHESTRATOR_KEY: 'sk_agent_secret',
      ASSAY_JWT_JWKS_URL: 'https://idp.example/jwks',
    };
    const saved = { ...process.env };
    // The provider's default is this process's environment, as in `assay server`.
    Object.assign(process.env, secrets, { LC_ALL: 'C.UTF-8', TZ: 'UTC' });
    try {
      const req = request(
        'run-exp-1-1-11',
        'env > "$OUT_DIR/env.tmp" && mv "$OUT_DIR/env.tmp" "$OUT_DIR/env"; echo started > "$OUT_DIR/started"',
      );
      await provisionStarted(provider(), req);
      const names = (await waitForFile(path.join(req.out, 'env'))).split('\n').map((l) => l.split('=')[0]);
      for (const name of Object.keys(secrets)) assert.ok(!names.includes(name), `${name} leaked`);
      assert.deepEqual(
        names.filter((n) => /^(AWS|S3|ASSAY|DATABASE|PG)/.test(n!)),
        [],
        'no service setting reaches the instance',
      );
      const text = readFileSync(path.join(req.out, 'env'), 'utf8');
      for (const value of Object.values(secrets)) assert.ok(!text.includes(value));
      for (const line of [`PATH=${process.env.PATH}`, 'LC_ALL=C.UTF-8', 'TZ=UTC', `OUT_DIR=${req.out}`])
        assert.ok(text.split('\n').includes(line), `the instance has ${line}`);
      assert.ok(text.split('\n').includes('SERVICE_RUN=7'), 'the injected variables win over launch.env');
    } finally {
      for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name];
      Object.assign(process.env, saved);
    }
  });

  test("refuses a non-admin's run unless the operator lets every user run locally", async () => {
    const req = { ...request('run-exp-1-1-12'), provisionedByAdmin: false };
    const strict = provider();
    assert.throws(() => strict.checkLaunch(req.launch, req), ProvisionRefusedError);
    await assert.rejects(strict.provision(req), (error: Error) => {
      assert.ok(error instanceof ProvisionRefusedError);
      assert.match(error.message, /admins.*ASSAY_LOCAL_COMPUTE_USERS/);
      return true;
    });
    assert.equal(await strict.describe(req.idempotencyKey), undefined, 'nothing was started');
    const open = provider(2_000, { users: 'all' });
    open.checkLaunch(req.launch, req);
    const instance = await provisionStarted(open, req);
    assert.equal(instance.state, 'running');
    await open.terminate(req.idempotencyKey);
  });

  test('refuses a launch block a non-admin wrote, even when an admin provisions it', async () => {
    const author = { id: '00000000-0000-4000-8000-000000000002', email: 'r@example.test', is_admin: false };
    const strict = provider();
    for (const launchAuthor of [author, null]) {
      const req = { ...request('run-exp-1-1-13'), launchAuthor };
      await assert.rejects(strict.provision(req), (error: Error) => {
        assert.ok(error instanceof ProvisionRefusedError);
        assert.match(error.message, /written by .*not an admin.*ASSAY_LOCAL_COMPUTE_USERS=admins/);
        return true;
      });
    }
    assert.equal(await strict.describe('run-exp-1-1-13'), undefined, 'nothing was started');
    // A block tagged for another provider is not run here either.
    const ec2 = { ...request('run-exp-1-1-14'), launch: { provider: 'ec2' as const, command: 'true' } };
    assert.throws(() => strict.checkLaunch(ec2.launch, ec2), /launch\.provider is ec2/);
  });
});
