import { randomBytes } from 'node:crypto';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFile, rm, writeFile } from 'node:fs/promises';
import net, { type AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { RUNNER_BUNDLE } from '../../src/compute/runner-bundle.ts';
import { generateOrchestratorKey } from '../../src/server/orchestration/orchestrator-keys.ts';
import { assayBin, cliJson, repoRoot, runCli, tempHome } from '../support/cli.ts';
import { FakeOrchestrator } from '../support/fake-orchestrator.ts';
import { freePort } from '../support/free-port.ts';
import { startTestService, type TestService } from '../support/service.ts';

// Issue #25's CLI frictions: --version, the unreachable service named with how to set it, EPIPE, runs compare,
// organizations, and lists and searches that say which scope they looked in.

/** `assay ARGS | READER` through bash: a real pipe; answers assay's exit status, its stderr, and the output. */
function pipeline(args: string[], reader: string, env: Record<string, string>, home: string, bin = assayBin) {
  const quoted = [process.execPath, bin, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  const script = `${quoted} 2>"$ERR" | ${reader}; echo "status=\${PIPESTATUS[0]}"`;
  const errFile = path.join(home, `stderr-${Math.random().toString(36).slice(2)}`);
  return new Promise<{ stdout: string; stderr: string; status: number }>((resolve, reject) => {
    const child = spawn('bash', ['-c', script], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, ERR: errFile, ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d));
    child.once('error', reject);
    child.once('close', async () => {
      const status = Number(/status=(\d+)\s*$/.exec(stdout)?.[1]);
      resolve({
        stdout: stdout.replace(/status=\d+\s*$/, ''),
        stderr: await readFile(errFile, 'utf8'),
        status,
      });
    });
  });
}

describe('CLI frictions: --version, unreachable service, EPIPE', () => {
  let home: string;
  before(async () => {
    home = await tempHome();
  });
  after(() => rm(home, { recursive: true, force: true }));

  it('--version and -V print the version of package.json, from the sources and from the runner bundle', async () => {
    const { version } = JSON.parse(await readFile(path.join(repoRoot, 'package.json'), 'utf8'));
    for (const flag of ['--version', '-V']) {
      const r = await runCli([flag], { home });
      assert.deepEqual([r.code, r.stdout, r.stderr], [0, `${version}\n`, '']);
    }
    assert.match((await runCli(['--help'], { home })).stdout, /-V, --version\s+print the version of assay/);
    // The bundle the local provider runs (scripts/test.sh builds it) reads the same file from dist/runner.
    const bundled = await new Promise<string>((resolve, reject) => {
      const child = spawn(process.execPath, [RUNNER_BUNDLE, '--version'], { env: { HOME: home } });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d));
      child.once('error', reject);
      child.once('close', () => resolve(out));
    });
    assert.equal(bundled, `${version}\n`);
  });

  it('the runner bundle’s `assay run --help | true`: exit 0, no stack trace', async () => {
    const r = await pipeline(['run', '--help'], 'true', {}, home, RUNNER_BUNDLE);
    assert.deepEqual([r.status, r.stderr], [0, '']);
  });

  it('a closed port: one line naming the URL, the reason, where the URL came from and how to set it; exit 1', async () => {
    const port = await freePort(); // nothing listens on it
    const url = `http://127.0.0.1:${port}`;
    // A made-up key of the right shape: nothing answers at the URL, so it is never checked.
    const key = `sk_user_${randomBytes(16).toString('hex')}`;
    const fromEnv = await runCli(['experiments', 'list'], {
      home,
      env: { SERVICE_SERVER_URL: url, SERVICE_API_KEY: key },
    });
    assert.equal(fromEnv.code, 1);
    assert.equal(fromEnv.stdout, '');
    assert.equal(
      fromEnv.stderr,
      `assay: cannot reach the service at ${url} (connection refused); the URL is from env SERVICE_SERVER_URL; ` +
        'set SERVICE_SERVER_URL, or run `assay auth login --server-url URL` to store one\n',
    );
    // From the config file that `assay auth login` writes: the file is named.
    const config = path.join(home, '.assay', 'config.yaml');
    await runCli(['auth', 'login', '--server-url', url, '--no-verify', '--personal'], {
      home,
      input: `${key}\n`,
    });
    const fromFile = await runCli(['search', 'warmup'], { home });
    assert.equal(fromFile.code, 1, fromFile.stderr);
    assert.match(
      fromFile.stderr,
      new RegExp(
        `^assay: cannot reach the service at ${url} \\(connection refused\\); the URL is from file ${config};`,
      ),
    );
    assert.equal(fromFile.stderr.split('\n').length, 2, 'one line');
    assert.doesNotMatch(fromFile.stderr, /fetch failed|\n\s+at /);
    // A service that takes the connection and never answers: the wait named, and how to change it.
    const sockets: net.Socket[] = [];
    const silent = net.createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const silentUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
    try {
      const mute = await runCli(['experiments', 'list'], {
        home,
        env: { SERVICE_SERVER_URL: silentUrl, SERVICE_API_KEY: key, SERVICE_TIMEOUT: '1' },
      });
      assert.equal(mute.code, 1);
      assert.equal(
        mute.stderr,
        `assay: the service at ${silentUrl} did not answer (no answer within 1 s); the URL is from env ` +
          'SERVICE_SERVER_URL; set SERVICE_SERVER_URL, or run `assay auth login --server-url URL` to store ' +
          'one; SERVICE_TIMEOUT sets the wait\n',
      );
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
    // An unknown host.
    const unknown = await runCli(['experiments', 'list'], {
      home,
      env: { SERVICE_SERVER_URL: 'http://assay.invalid:8080', SERVICE_API_KEY: key },
    });
    assert.equal(unknown.code, 1);
    assert.match(
      unknown.stderr,
      /^assay: cannot reach the service at http:\/\/assay\.invalid:8080 \((host not found|host name lookup failed)\);/,
    );
  });

  describe('against a service', () => {
    let t: TestService;
    let env: Record<string, string>;
    let experimentId: string;

    before(async () => {
      t = await startTestService({ listen: true });
      env = { SERVICE_SERVER_URL: t.url!, SERVICE_API_KEY: (await t.createUser()).key };
      const made = await cliJson(['experiments', 'create', '--name', 'long-curve'], { home, env });
      experimentId = made.id;
      const config = path.join(home, 'v.yaml');
      await writeFile(config, 'lr: 0.1\n');
      await cliJson(['variations', 'create', experimentId, '--file', config], { home, env });
      await cliJson(['experiments', 'commit', experimentId], { home, env });
      await cliJson(['runs', 'create', experimentId, '1'], { home, env });
      const run = `/experiments/${experimentId}/variations/1/runs/1`;
      await t.as(env.SERVICE_API_KEY!).get(`${run}/config`);
      assert.equal((await t.as(env.SERVICE_API_KEY!).post(`${run}/start`, {})).status, 200);
      // 4,000 points: a table of well over a pipe's 64 KiB buffer, so `head -1` leaves while it is written.
      for (let from = 0; from < 4000; from += 1000) {
        const metrics = Array.from({ length: 1000 }, (_, i) => ({
          key: 'loss',
          step: from + i,
          value: 1 / (from + i + 1),
        }));
        assert.equal((await t.as(env.SERVICE_API_KEY!).post(`${run}/metrics`, { metrics })).status, 200);
      }
    });
    after(() => t.close());

    it('`… | head -1` prints the first line and exits 0 without a stack trace', async () => {
      const r = await pipeline(
        ['runs', 'metrics', experimentId, '1', '1', '--key', 'loss'],
        'head -1',
        env,
        home,
      );
      assert.match(r.stdout, /^STEP\s+VALUE\s+TIME\n$/);
      assert.equal(r.status, 0, r.stderr);
      assert.equal(r.stderr, '');
    });

    it('a reader gone before the first write: exit 0, nothing on stderr but the scope line', async () => {
      const r = await pipeline(['experiments', 'list', '--json'], 'true', env, home);
      assert.equal(r.status, 0, r.stderr);
      assert.equal(r.stderr, 'experiments in your personal scope\n');
    });
  });
});

describe('CLI: runs compare', () => {
  let t: TestService;
  let home: string;
  let env: Record<string, string>;
  let key: string;
  const orchestratorKey = generateOrchestratorKey();
  const cli = (args: string[]) => runCli(args, { home, env });
  const file = async (name: string, text: string) => {
    const p = path.join(home, name);
    await writeFile(p, text);
    return p;
  };
  const runPath = (id: string, n: number, r: number) => `/experiments/${id}/variations/${n}/runs/${r}`;
  const startRun = async (id: string, n: number, r: number) => {
    await t.as(key).get(`${runPath(id, n, r)}/config`);
    assert.equal((await t.as(key).post(`${runPath(id, n, r)}/start`, {})).status, 200);
  };
  const log = async (id: string, n: number, r: number, points: Array<[string, number, number]>) => {
    const metrics = points.map(([k, step, value]) => ({ key: k, step, value }));
    assert.equal((await t.as(key).post(`${runPath(id, n, r)}/metrics`, { metrics })).status, 200);
  };

  before(async () => {
    t = await startTestService({
      listen: true,
      orchestrator: new FakeOrchestrator(),
      env: { ASSAY_LOCAL_COMPUTE_USERS: 'all', ASSAY_ORCHESTRATOR_KEY: orchestratorKey },
    });
    home = await tempHome();
    key = (await t.createUser()).key;
    env = { SERVICE_SERVER_URL: t.url!, SERVICE_API_KEY: key };
  });
  after(async () => {
    await t.close();
    await rm(home, { recursive: true, force: true });
  });

  it('a table of the runs: differing config values, each key’s last value to 5 significant digits; --keys, --digits, --json', async () => {
    const id = (await cliJson(['experiments', 'create', '--name', 'lr-ablation'], { home, env })).id;
    const base = 'optimizer:\n  lr: 0.001\n  name: adam\nlayers: 2\n';
    const small = 'optimizer:\n  lr: 0.00031622776601683794\n  name: adam\nlayers: 4\n';
    await cliJson(['variations', 'create', id, '--file', await file('base.yaml', base), '--name', 'base'], {
      home,
      env,
    });
    await cliJson(
      ['variations', 'create', id, '--file', await file('small.yaml', small), '--name', 'small-lr'],
      { home, env },
    );
    await cliJson(['experiments', 'commit', id], { home, env });
    for (const n of [1, 2]) {
      await cliJson(['runs', 'create', id, String(n)], { home, env });
      await startRun(id, n, 1);
    }
    await cliJson(['runs', 'create', id, '2'], { home, env }); // pending, nothing logged
    await log(id, 1, 1, [
      ['loss', 0, 2.5],
      ['loss', 10, 0.123456789],
      ['acc', 10, 0.91],
      ['system/cpu', 0, 12],
    ]);
    await log(id, 2, 1, [
      ['loss', 10, 0.0617283945],
      ['acc', 10, 0.92033333],
      ['system/cpu', 0, 15],
    ]);

    const table = await cli(['runs', 'compare', id]);
    assert.equal(table.code, 0, table.stderr);
    assert.deepEqual(table.stdout.trimEnd().split('\n'), [
      'N  VARIATION  R  STATE    layers  optimizer.lr  acc      loss',
      '1  base       1  running  2       0.001         0.91     0.12346',
      '2  small-lr   1  running  4       0.00031623    0.92033  0.061728',
      '2  small-lr   2  pending  4       0.00031623    -        -',
    ]);
    const picked = await cli(['runs', 'compare', id, '--keys', 'loss,system/cpu', '--digits', '3']);
    assert.equal(picked.code, 0, picked.stderr);
    assert.match(picked.stdout, /^N\s+VARIATION\s+R\s+STATE\s+layers\s+optimizer\.lr\s+loss\s+system\/cpu$/m);
    assert.match(picked.stdout, /^1\s+base\s+1\s+running\s+2\s+0\.001\s+0\.123\s+12$/m);
    assert.match(picked.stdout, /^2\s+small-lr\s+1\s+running\s+4\s+0\.000316\s+0\.0617\s+15$/m);

    const json = await cliJson(['runs', 'compare', id, '--keys', 'loss'], { home, env });
    assert.deepEqual(
      [json.experiment_id, json.sweep_id, json.objective, json.keys, json.config_keys],
      [id, null, null, ['loss'], ['layers', 'optimizer.lr']],
    );
    assert.deepEqual(
      json.runs.map((r: any) => [r.n, r.r, r.variation, r.state, r.config, r.metrics.loss?.last ?? null]),
      [
        [1, 1, 'base', 'running', { layers: 2, 'optimizer.lr': 0.001 }, 0.123456789],
        [2, 1, 'small-lr', 'running', { layers: 4, 'optimizer.lr': 0.00031622776601683794 }, 0.0617283945],
        [2, 2, 'small-lr', 'pending', { layers: 4, 'optimizer.lr': 0.00031622776601683794 }, null],
      ],
    );
    assert.deepEqual(json.runs[0].metrics.loss, {
      last_step: 10,
      last: 0.123456789,
      min: 0.123456789,
      max: 2.5,
      count: 2,
    });

    // An archived run leaves the comparison (kept: --archived lists it).
    assert.equal((await cli(['runs', 'update', id, '2', '2', '--archive'])).code, 0);
    const archived = await cli(['runs', 'compare', id]);
    assert.equal(archived.code, 0, archived.stderr);
    assert.deepEqual(
      archived.stdout
        .trimEnd()
        .split('\n')
        .slice(1)
        .map((line) => line.split(/\s+/).slice(0, 4)),
      [
        ['1', 'base', '1', 'running'],
        ['2', 'small-lr', '1', 'running'],
      ],
    );

    const bad = await cli(['runs', 'compare', id, '--digits', '0']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /whole number from 1 to 17/);
  });

  it('--sweep: that sweep’s runs only, its objective first and marked with its goal', async () => {
    const id = (await cliJson(['experiments', 'create', '--name', 'lr-sweep'], { home, env })).id;
    const base = await file(
      'sweep-base.yaml',
      'optimizer:\n  lr: 3.0e-4\nseed: 0\nlaunch:\n  command: python train.py\n',
    );
    const points = await file(
      'points.json',
      JSON.stringify([{ 'optimizer.lr': 0.1 }, { 'optimizer.lr': 0.01 }]),
    );
    const created = await cli([
      'sweeps',
      'create',
      id,
      '--base',
      base,
      '--list',
      points,
      '--metric',
      'val_loss',
    ]);
    assert.equal(created.code, 0, created.stderr);
    const sweepId = /^created sweep (\S+):/m.exec(created.stdout)![1]!;
    await startRun(id, 1, 1);
    await log(id, 1, 1, [
      ['val_loss', 1, 0.9],
      ['val_loss', 2, 0.41234567],
      ['acc', 2, 0.5],
    ]);

    const table = await cli(['runs', 'compare', id, '--sweep', sweepId]);
    assert.equal(table.code, 0, table.stderr);
    const lines = table.stdout.trimEnd().split('\n');
    assert.match(lines[0]!, /^N\s+VARIATION\s+R\s+STATE\s+optimizer\.lr\s+val_loss \(minimize\)\s+acc$/);
    assert.match(lines[1]!, /^1\s+.+?\s+1\s+running\s+0\.1\s+0\.41235\s+0\.5$/);
    assert.match(lines[2]!, /^2\s+.+?\s+1\s+pending\s+0\.01\s+-\s+-$/);
    assert.equal(lines.length, 3);
    const json = await cliJson(['runs', 'compare', id, '--sweep', sweepId], { home, env });
    assert.deepEqual(
      [json.sweep_id, json.objective, json.keys[0]],
      [sweepId, { metric: 'val_loss', goal: 'minimize' }, 'val_loss'],
    );
    // Archiving a sweep's run takes it out of the sweep's comparison too.
    assert.equal((await cli(['runs', 'update', id, '2', '1', '--archive'])).code, 0);
    const rest = await cliJson(['runs', 'compare', id, '--sweep', sweepId], { home, env });
    assert.deepEqual(
      rest.runs.map((r: any) => [r.n, r.r]),
      [[1, 1]],
    );
  });
});

describe('CLI: organizations, and the scope of lists and searches', () => {
  let t: TestService;
  let home: string;
  let alice: { id: string; email: string; key: string };
  let bob: { id: string; email: string; key: string };
  const as = (who: { key: string }) => ({ SERVICE_SERVER_URL: t.url!, SERVICE_API_KEY: who.key });

  before(async () => {
    t = await startTestService({ listen: true });
    home = await tempHome();
    alice = await t.createUser();
    bob = await t.createUser();
  });
  after(async () => {
    await t.close();
    await rm(home, { recursive: true, force: true });
  });

  it('create (the slug from the name), list, members add by email with a role, members list', async () => {
    const env = as(alice);
    const created = await runCli(['organizations', 'create', 'ML Lab'], { home, env });
    assert.equal(created.code, 0, created.stderr);
    assert.match(
      created.stdout,
      /^created organization "ml-lab" \([0-9a-f-]{36}\); act in it with --organization ml-lab/,
    );
    const again = await runCli(['organizations', 'create', 'ML Lab'], { home, env });
    assert.equal(again.code, 1);
    assert.match(again.stderr, /slug ml-lab already exists \(slug_taken/);
    const reserved = await runCli(['organizations', 'create', 'Personal'], { home, env });
    assert.equal(reserved.code, 2);
    assert.match(reserved.stderr, /"personal" is not a usable slug.*pass --slug/);
    const vision = await cliJson(['organizations', 'create', 'Vision group', '--slug', 'vision'], {
      home,
      env,
    });
    assert.deepEqual([vision.slug, vision.name, vision.role], ['vision', 'Vision group', 'owner']);

    const listed = await runCli(['organizations', 'list'], { home, env });
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, /^SLUG\s+NAME\s+ROLE\s+DEFAULT\s+ID$/m);
    assert.match(listed.stdout, /^ml-lab\s+ML Lab\s+owner\s+-\s+[0-9a-f-]{36}$/m);
    assert.match(listed.stdout, /^vision\s+Vision group\s+owner/m);
    assert.match(listed.stderr, /your personal scope: --organization personal, the default/);

    const added = await runCli(['organizations', 'members', 'add', 'ml-lab', bob.email, '--role', 'member'], {
      home,
      env,
    });
    assert.equal(added.code, 0, added.stderr);
    const members = await cliJson(['orgs', 'members', 'list', 'ml-lab'], { home, env });
    assert.deepEqual(
      members.items.map((m: any) => [m.email, m.role]).sort(),
      [
        [alice.email, 'owner'],
        [bob.email, 'member'],
      ].sort(),
    );
    const table = await runCli(['organizations', 'members', 'list', 'ml-lab'], { home, env });
    assert.match(table.stdout, new RegExp(`^${bob.email.replace(/\./g, '\\.')}\\s+-\\s+member\\s`, 'm'));
    // Bob sees it among his; not being an owner, he cannot add.
    const bobs = await cliJson(['organizations', 'list'], { home, env: as(bob) });
    assert.deepEqual(
      bobs.organizations.map((o: any) => [o.slug, o.role]),
      [['ml-lab', 'member']],
    );
    const refused = await runCli(['organizations', 'members', 'add', 'ml-lab', alice.email], {
      home,
      env: as(bob),
    });
    assert.equal(refused.code, 1);
    const unknown = await runCli(['organizations', 'members', 'list', 'nope'], { home, env });
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /"nope" is not one of your organizations \(yours: ml-lab, vision\)/);
    const badRole = await runCli(['organizations', 'members', 'add', 'ml-lab', bob.email, '--role', 'boss'], {
      home,
      env,
    });
    assert.equal(badRole.code, 2);
  });

  it('experiments list and search say the scope on stderr; an empty search counts the other scopes’ matches', async () => {
    const env = as(bob);
    // A report in ml-lab (Bob is a member), none in Bob's personal scope.
    const labId = (await cliJson(['organizations', 'list'], { home, env })).organizations[0].id;
    const report = await t.as(alice.key).post('/assets', {
      kind: 'report',
      name: 'warmup notes',
      content: 'linear warmup lowers the final loss',
      content_type: 'text/plain',
      organization_id: labId,
    });
    assert.equal(report.status, 201, JSON.stringify(report.body));
    await cliJson(['experiments', 'create', '--name', 'lab-exp', '--organization', 'ml-lab'], { home, env });

    const personal = await runCli(['experiments', 'list'], { home, env });
    assert.equal(personal.code, 0, personal.stderr);
    assert.equal(personal.stderr, 'experiments in your personal scope\n');
    assert.doesNotMatch(personal.stdout, /lab-exp/);
    const lab = await runCli(['experiments', 'list', '--organization', 'ml-lab', '--json'], { home, env });
    assert.equal(lab.stderr, 'experiments in organization "ml-lab"\n');
    assert.deepEqual(
      JSON.parse(lab.stdout).map((e: any) => e.name),
      ['lab-exp'],
    );

    // The assets list is not narrowed by the scope: it says what it lists instead of leaving it to guess.
    const assets = await runCli(['assets', 'list'], { home, env });
    assert.equal(assets.code, 0, assets.stderr);
    assert.equal(
      assets.stderr,
      'assets in every scope you can see (the configured organization does not narrow this list; --experiment does)\n',
    );
    assert.match(assets.stdout, /warmup notes/);

    const empty = await runCli(['search', 'warmup'], { home, env });
    assert.equal(empty.code, 0, empty.stderr);
    assert.equal(empty.stdout, '');
    assert.equal(
      empty.stderr,
      'no matches in your personal scope; 1 in organization "ml-lab" (--organization ml-lab)\n',
    );
    const found = await runCli(['search', 'warmup', '--organization', 'ml-lab'], { home, env });
    assert.equal(found.stderr, 'searched organization "ml-lab"\n');
    assert.match(found.stdout, /^warmup notes {2}\[report\]/);
    // Nowhere: no hint of other scopes.
    const nowhere = await runCli(['search', 'zeppelin'], { home, env });
    assert.equal(nowhere.stderr, 'no matches in your personal scope\n');
    const json = await cliJson(['search', 'warmup'], { home, env });
    assert.deepEqual(json.scope, { id: 'personal', slug: null, name: null });
    assert.deepEqual(json.other_scopes, [{ scope: { id: labId, slug: 'ml-lab', name: 'ML Lab' }, hits: 1 }]);
  });
});
