// The local provider's sandbox itself (the machine's bubblewrap, as root, with scripts/setup-local-sandbox.sh's
// user): describe and terminate still see and end the whole instance with bwrap between, and the settings
// decide as documented.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, describe, test } from 'node:test';
import { ProvisionRefusedError, type ProvisionRequest } from '../../src/compute/compute-provider.ts';
import { localCompute } from '../../src/compute/local-config.ts';
import { LocalProvider } from '../../src/compute/local-provider.ts';
import { CODE_ROOT } from '../../src/compute/runner-bundle.ts';
import { ConfigError } from '../../src/settings/config-error.ts';

const root = mkdtempSync(path.join(tmpdir(), 'assay-local-sandbox-'));
after(() => rmSync(root, { recursive: true, force: true }));

/** Pids of live `sleep <n><marker>`s, from the host's /proc. */
function processesWith(marker: string): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        if (/^[ZX]$/.test(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0]!)) return false;
        const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
        return argv[0] === 'sleep' && argv[1]?.endsWith(marker);
      } catch {
        return false;
      }
    })
    .map(Number);
}

function request(key: string, command: string): ProvisionRequest {
  return {
    idempotencyKey: key,
    env: { SERVICE_SERVER_URL: 'http://127.0.0.1:1' },
    launch: { command },
    tags: {},
    provisionedByAdmin: false,
    launchAuthor: null,
  };
}

describe('the local sandbox', () => {
  const local = localCompute({ ASSAY_LOCAL_SANDBOX: 'on', PATH: process.env.PATH });

  test('is available here, and then every researcher may use local by default', () => {
    assert.equal(local.sandbox.mode, 'bwrap', JSON.stringify(local.sandbox));
    assert.equal(local.users, 'all');
    assert.equal(localCompute({ ASSAY_LOCAL_SANDBOX: 'off', PATH: process.env.PATH }).users, 'admins');
    assert.equal(
      localCompute({ ASSAY_LOCAL_SANDBOX: 'off', ASSAY_LOCAL_COMPUTE_USERS: 'all', PATH: process.env.PATH })
        .users,
      'all',
    );
  });

  test('on, where it cannot run, is a ConfigError at start naming what to set up', () => {
    assert.throws(
      () =>
        localCompute({
          ASSAY_LOCAL_SANDBOX: 'on',
          ASSAY_LOCAL_RUN_AS: 'no-such-user',
          PATH: process.env.PATH,
        }),
      (error: Error) =>
        error instanceof ConfigError &&
        /user no-such-user does not exist: run scripts\/setup-local-sandbox\.sh/.test(error.message),
    );
    const auto = localCompute({ ASSAY_LOCAL_RUN_AS: 'no-such-user', PATH: process.env.PATH });
    assert.deepEqual([auto.sandbox.mode, auto.users], ['none', 'admins']);
  });

  test('terminate ends every process of the instance, even one that left its process group', async () => {
    const provider = new LocalProvider({
      stateDir: path.join(root, 'state'),
      dataDir: root,
      runnerArgv: ['sh', '-c', 'exec "$@"', 'runner'],
      graceMs: 1_000,
      users: local.users,
      sandbox: local.sandbox,
      limits: local.limits,
    });
    const marker = `${process.pid}${Date.now() % 100000}`;
    // A child in the group, one in a session of its own (out of reach of a group kill), and the leader.
    const command = `sleep 1${marker} & setsid sleep 2${marker} & exec sleep 3${marker}`;
    await provider.provision(request('terminate-me', command));
    for (let i = 0; i < 100 && processesWith(marker).length < 3; i++) await sleep(50);
    const running = processesWith(marker);
    assert.equal(running.length, 3, 'the three sleeps run');
    // They run as the sandbox's user, not as root.
    const uids = running.map((pid) => /^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]);
    assert.ok(
      uids.every((uid) => uid === String((local.sandbox as { runAs: { uid: number } }).runAs.uid)),
      uids.join(),
    );
    assert.equal((await provider.describe('terminate-me'))?.state, 'running');

    await provider.terminate('terminate-me');
    for (let i = 0; i < 100 && processesWith(marker).length > 0; i++) await sleep(20);
    assert.deepEqual(processesWith(marker), [], 'no process of the run is left');
    assert.equal(await provider.describe('terminate-me'), undefined);
  });

  test('the instance sees only its own processes, as its user, with its working dir writable', async () => {
    const provider = new LocalProvider({
      stateDir: path.join(root, 'state2'),
      dataDir: root,
      runnerArgv: ['sh', '-c', 'exec "$@"', 'runner'],
      users: local.users,
      sandbox: local.sandbox,
      limits: local.limits,
    });
    await provider.provision(
      request(
        'look',
        'echo "$(id -un) $(ls /proc | grep -c "^[0-9]") $HOME" > seen; touch /usr/x 2>/dev/null || echo ro >> seen',
      ),
    );
    while (await provider.describe('look')) await sleep(50);
    const cwd = path.join(root, 'state2', 'instances', 'look');
    const seen = readFileSync(path.join(cwd, 'seen'), 'utf8').trim().split('\n');
    // bwrap's init, the shell and its pipeline: nothing of the host's hundreds.
    assert.match(seen[0]!, new RegExp(`^assay-run [1-9] ${cwd}$`), seen[0]);
    assert.equal(seen[1], 'ro');
    assert.equal(execFileSync('stat', ['-c', '%U', cwd], { encoding: 'utf8' }).trim(), 'assay-run');
  });

  test('a data dir inside the runner’s code (the default ./.assay-data) is hidden, the instance’s own dir aside', async () => {
    // As `npm start` lays it out: the data dir in the repository the runner is read from.
    const dataDir = path.join(CODE_ROOT, `.assay-data-sandbox-test-${process.pid}`);
    mkdirSync(dataDir, { mode: 0o700 });
    try {
      writeFileSync(path.join(dataDir, 'storage-secret'), 'secret\n', { mode: 0o600 });
      const provider = new LocalProvider({
        stateDir: path.join(dataDir, 'instances'),
        dataDir,
        runnerArgv: ['sh', '-c', 'exec "$@"', 'runner'],
        users: local.users,
        sandbox: local.sandbox,
        limits: local.limits,
      });
      const look = `{ ls -A ${dataDir}; ls -A ${dataDir}/instances; cat ${dataDir}/storage-secret; ls ${CODE_ROOT}/package.json; } > seen 2>&1`;
      await provider.provision(request('inside', look));
      while (await provider.describe('inside')) await sleep(50);
      const seen = readFileSync(path.join(dataDir, 'instances', 'instances', 'inside', 'seen'), 'utf8');
      // Only the path down to its own working dir; the code itself is there.
      assert.deepEqual(seen.trim().split('\n'), [
        'instances',
        'instances',
        `cat: ${dataDir}/storage-secret: No such file or directory`,
        `${CODE_ROOT}/package.json`,
      ]);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test('an instance outlives the process that started it, and a new provider on its state ends it', async () => {
    const stateDir = path.join(root, 'state-outlive');
    const marker = `${process.pid}${(Date.now() + 7) % 100000}`;
    // Another Node process provisions and exits at once, as a worker killed after provisioning would.
    const script = `
      import { LocalProvider } from ${JSON.stringify(path.join(CODE_ROOT, 'src/compute/local-provider.ts'))};
      import { localCompute } from ${JSON.stringify(path.join(CODE_ROOT, 'src/compute/local-config.ts'))};
      const local = localCompute(process.env);
      const p = new LocalProvider({ stateDir: ${JSON.stringify(stateDir)}, runnerArgv: ['sh', '-c', 'exec "$@"', 'r'], ...local });
      await p.provision(${JSON.stringify(request('outlive', `exec sleep 4${marker}`))});
      process.exit(0);`;
    execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      env: { PATH: process.env.PATH, ASSAY_LOCAL_SANDBOX: 'on' },
    });
    await sleep(300);
    assert.equal(processesWith(marker).length, 1, 'the instance still runs');
    const provider = new LocalProvider({ stateDir, graceMs: 1_000, sandbox: local.sandbox });
    assert.equal((await provider.describe('outlive'))?.state, 'running');
    await provider.terminate('outlive');
    assert.deepEqual(processesWith(marker), []);
  });

  test('without writable cgroups, a launch with cpus or memory_mb is refused at once, naming the field and why', async () => {
    const provider = new LocalProvider({
      stateDir: path.join(root, 'state-limits'),
      users: 'all',
      limits: { cpu: undefined, memory: undefined, why: 'the service does not run as root' },
    });
    for (const [field, launch] of [
      ['launch.cpus', { command: 'true', cpus: 2 }],
      ['launch.memory_mb', { command: 'true', memory_mb: 512 }],
    ] as const)
      await assert.rejects(
        provider.provision({ ...request('limited', 'true'), launch }),
        (error: Error) =>
          error instanceof ProvisionRefusedError &&
          error.message.startsWith(`${field} needs the kernel's cgroup`) &&
          error.message.includes('the service does not run as root'),
      );
    assert.deepEqual(
      readdirSync(root).includes('state-limits') ? readdirSync(path.join(root, 'state-limits')) : [],
      [],
    );
  });
});
