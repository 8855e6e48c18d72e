import assert from 'node:assert/strict';
import { mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import { parse } from 'yaml';
import { assayBin, runCli, tempHome } from '../support/cli.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { shellQuote, TmuxSession } from '../support/tmux.ts';

describe('assay auth login', () => {
  let t: TestService;
  let key: string;
  let orgs: Record<string, string>; // slug → id
  let sessions: TmuxSession[] = [];
  let homes: string[] = [];

  before(async () => {
    t = await startTestService({ listen: true });
    key = (await t.createUser()).key;
    orgs = {};
    for (const slug of ['acme', 'beta-lab']) {
      const res = await t.as(key).post('/organizations', { slug, name: `${slug} research` });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      orgs[slug] = res.body.id;
    }
  });
  afterEach(async () => {
    for (const s of sessions) await s.kill();
    for (const h of homes) await rm(h, { recursive: true, force: true });
    sessions = [];
    homes = [];
  });
  after(() => t.close());

  async function home(): Promise<string> {
    const h = await tempHome();
    homes.push(h);
    return h;
  }

  async function mintKey(): Promise<string> {
    const res = await t.as(key).post('/api-keys', { description: 'laptop', scopes: ['experiments:read'] });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body.key;
  }

  /** `assay auth login …` in a real terminal, with nothing of this process's environment but PATH. */
  async function loginInTmux(h: string, args: string[]): Promise<TmuxSession> {
    const argv = [process.execPath, assayBin, 'auth', 'login', ...args].map(shellQuote).join(' ');
    const session = await TmuxSession.start(
      `assay-test-${process.pid}-${sessions.length}`,
      `env -i PATH=${shellQuote(process.env.PATH ?? '')} HOME=${shellQuote(h)} ${argv}`,
    );
    sessions.push(session);
    return session;
  }

  const files = (h: string) => ({
    config: path.join(h, '.assay', 'config.yaml'),
    credentials: path.join(h, '.assay', 'credentials.yaml'),
  });
  const readYaml = async (file: string) => parse(await readFile(file, 'utf8'));

  it('as a person in a terminal: hidden key, the organizations listed, one picked by number; files written, key never on screen', async () => {
    const h = await home();
    const tmux = await loginInTmux(h, ['--server-url', t.url!]);
    await tmux.waitFor(/API key or access token \[input is masked\]/);
    await tmux.type(key);
    await tmux.press('Enter');
    const listed = await tmux.waitFor(
      /Default organization \(number or slug; Enter keeps personal scope\): $/m,
    );
    assert.match(listed, /^\s+0\s+personal\s+your personal scope$/m);
    const number = /^\s+(\d+)\s+beta-lab\s+beta-lab research \(owner\)$/m.exec(listed)?.[1];
    assert.ok(number, `beta-lab is listed with a number:\n${listed}`);
    await tmux.type(number);
    await tmux.press('Enter');
    const end = await tmux.waitFor(/^EXIT=\d+$/m);
    assert.match(end, /^EXIT=0$/m);
    assert.match(end, new RegExp(`Default organization: beta-lab \\(${orgs['beta-lab']}\\)`));
    assert.ok(!end.includes(key), 'the key never appears on screen');
    assert.ok(!end.includes(key.slice(8, 20)), 'nor any long piece of it');
    const { config, credentials } = files(h);
    assert.deepEqual(await readYaml(config), { server_url: t.url, organization_id: orgs['beta-lab'] });
    assert.deepEqual(await readYaml(credentials), { api_key: key });
    assert.equal((await stat(credentials)).mode & 0o777, 0o600);
    assert.equal((await stat(path.dirname(credentials))).mode & 0o777, 0o700);
  });

  it('in a terminal again: Backspace edits the hidden key, Enter keeps the organization; the key rotates, config.yaml keeps its other lines', async () => {
    const h = await home();
    const { config, credentials } = files(h);
    await mkdir(path.dirname(config), { recursive: true });
    await writeFile(config, `# my settings\ntimeout: 12\norganization_slug: acme\nserver_url: ${t.url}\n`);
    await writeFile(credentials, 'api_key: sk_user_old\n', { mode: 0o644 });
    const second = await mintKey();
    const tmux = await loginInTmux(h, []);
    await tmux.waitFor(/\[input is masked\]/);
    await tmux.type('oops');
    await tmux.press('BSpace', 'BSpace', 'BSpace', 'BSpace');
    await tmux.type(second);
    await tmux.press('Enter');
    const listed = await tmux.waitFor(/Enter keeps acme\): $/m);
    assert.match(listed, /acme\s+acme research \(owner\)\s+\[current\]/);
    await tmux.press('Enter');
    assert.match(await tmux.waitFor(/^EXIT=\d+$/m), /^EXIT=0$/m);
    assert.equal(
      await readFile(config, 'utf8'),
      `# my settings\ntimeout: 12\norganization_slug: acme\nserver_url: ${t.url}\n`,
    );
    assert.deepEqual(await readYaml(credentials), { api_key: second });
    assert.equal(
      (await stat(credentials)).mode & 0o777,
      0o600,
      'a credentials.yaml that was 644 becomes 600',
    );
  });

  it('piped answers (not a terminal): --organization by slug is stored as its id; --personal clears it', async () => {
    const h = await home();
    const bySlug = await runCli(['auth', 'login', '--server-url', t.url!, '--organization', 'acme'], {
      home: h,
      input: `${key}\n`,
    });
    assert.equal(bySlug.code, 0, bySlug.stderr);
    assert.equal((await readYaml(files(h).config)).organization_id, orgs.acme);
    const personal = await runCli(['auth', 'login', '--personal'], { home: h, input: `${key}\n` });
    assert.equal(personal.code, 0, personal.stderr);
    assert.deepEqual(await readYaml(files(h).config), { server_url: t.url });
    const piped = await runCli(['auth', 'login'], { home: h, input: `${key}\nbeta-lab\n` });
    assert.equal(piped.code, 0, piped.stderr);
    assert.equal((await readYaml(files(h).config)).organization_id, orgs['beta-lab']);
    assert.ok(!`${piped.stdout}${piped.stderr}`.includes(key), 'the key is not echoed');
  });

  it('--no-verify stores the key and the organization as given without calling the server', async () => {
    const h = await home();
    const r = await runCli(
      ['auth', 'login', '--no-verify', '--server-url', 'http://127.0.0.1:9', '--organization', 'some-lab'],
      { home: h, input: 'sk_agent_anything\n' },
    );
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(await readYaml(files(h).config), {
      server_url: 'http://127.0.0.1:9',
      organization_slug: 'some-lab',
    });
    assert.deepEqual(await readYaml(files(h).credentials), { api_key: 'sk_agent_anything' });
  });

  it('a refused key writes nothing and exits 1; no key or clashing flags exit 2', async () => {
    const h = await home();
    const refused = await runCli(['auth', 'login', '--server-url', t.url!], {
      home: h,
      input: 'sk_user_notakey\n',
    });
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /^error: .+ \(unauthenticated, request [0-9a-f-]+\)$/m);
    await assert.rejects(stat(path.join(h, '.assay')), { code: 'ENOENT' });
    const empty = await runCli(['auth', 'login', '--server-url', t.url!], { home: h, input: '\n' });
    assert.equal(empty.code, 2);
    const clash = await runCli(['auth', 'login', '--personal', '--organization', 'acme'], { home: h });
    assert.equal(clash.code, 2);
    const notMine = await runCli(['auth', 'login', '--server-url', t.url!, '--organization', 'nope'], {
      home: h,
      input: `${key}\n`,
    });
    assert.equal(notMine.code, 2);
    assert.match(notMine.stderr, /not one of your organizations \(yours: acme, beta-lab\)/);
  });
});
