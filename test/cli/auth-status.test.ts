import assert from 'node:assert/strict';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { cliJson, runCli, tempHome } from '../support/cli.ts';
import { startTestService, type TestService } from '../support/service.ts';

describe('assay auth status', () => {
  let t: TestService;
  let key: string;
  let home: string;
  let credentials: string;

  before(async () => {
    t = await startTestService({ listen: true });
    key = (await t.createUser()).key;
    home = await tempHome();
    await mkdir(path.join(home, '.assay'));
    credentials = path.join(home, '.assay', 'credentials.yaml');
    await writeFile(
      path.join(home, '.assay', 'config.yaml'),
      `server_url: ${t.url}\norganization_slug: acme\n`,
    );
    await writeFile(credentials, `api_key: ${key}\n`, { mode: 0o600 });
  });
  after(async () => {
    await t.close();
    await rm(home, { recursive: true, force: true });
  });

  it('prints each setting with its source and the key masked, never whole', async () => {
    const r = await runCli(['auth', 'status'], { home });
    assert.equal(r.code, 0, r.stderr);
    const config = path.join(home, '.assay', 'config.yaml');
    assert.match(r.stdout, new RegExp(`^server_url\\s+${t.url}\\s+file ${config}$`, 'm'));
    assert.match(
      r.stdout,
      new RegExp(`^api_key\\s+sk_user_\\*\\*\\*\\*${key.slice(-4)}\\s+file ${credentials}$`, 'm'),
    );
    assert.match(r.stdout, /^timeout\s+30\s+default$/m);
    assert.match(r.stdout, /^organization_slug\s+acme\s+file /m);
    assert.ok(!r.stdout.includes(key), 'the key is masked');
  });

  it('--json: the environment outranks the files, and says so', async () => {
    const other = `sk_agent_${'0123456789abcdef'.repeat(2)}`;
    const status = await cliJson(['auth', 'status'], {
      home,
      env: {
        SERVICE_API_KEY: other,
        SERVICE_TIMEOUT: '5',
        SERVICE_ORGANIZATION_ID: '6d1f3a52-0000-4000-8000-000000000000',
      },
    });
    assert.deepEqual(status.settings.api_key, {
      value: 'sk_agent_****cdef',
      source: { kind: 'env', variable: 'SERVICE_API_KEY' },
    });
    assert.deepEqual(status.settings.timeout, {
      value: 5,
      source: { kind: 'env', variable: 'SERVICE_TIMEOUT' },
    });
    assert.equal(status.settings.server_url.source.kind, 'file');
    assert.equal(status.settings.organization_id.source.variable, 'SERVICE_ORGANIZATION_ID');
    assert.equal(
      status.settings.organization_slug,
      undefined,
      'the organization is one setting: the env id hides the file slug',
    );
  });

  it('--verify asks the server who the key is: 0 for a good key, 1 for a refused one', async () => {
    const good = await runCli(['auth', 'status', '--verify'], { home });
    assert.equal(good.code, 0, good.stderr);
    assert.match(good.stdout, /^verified: .+@example\.test \(via user; scopes .*experiments:read/m);
    const bad = await runCli(['auth', 'status', '--verify'], {
      home,
      env: { SERVICE_API_KEY: 'sk_user_revokedorwrong' },
    });
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /^error: .+ \(unauthenticated, request [0-9a-f-]+\)$/m);
  });

  it('exits 2 when no key is configured, 2 on a broken config file', async () => {
    const empty = await tempHome();
    try {
      const none = await runCli(['auth', 'status'], { home: empty });
      assert.equal(none.code, 2);
      assert.match(none.stdout, /^api_key\s+\(not set\)/m);
      assert.match(none.stderr, /not logged in: run `assay auth login`/);
      await mkdir(path.join(empty, '.assay'));
      await writeFile(path.join(empty, '.assay', 'config.yaml'), 'timeout: [1\n');
      const broken = await runCli(['auth', 'status'], { home: empty });
      assert.equal(broken.code, 2);
      assert.match(broken.stderr, /^error: .+config\.yaml:\d+:\d+: invalid YAML/m);
    } finally {
      await rm(empty, { recursive: true, force: true });
    }
  });
});
