import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import {
  defaultConfigPaths,
  describeSource,
  inspectSettings,
  maskKey,
  PERSONAL,
  resolveSettings,
  resolveSettingsFromFile,
} from '../../../src/client/config.ts';
import type { SettingName, SettingsOptions } from '../../../src/client/config.ts';
import { ConfigError } from '../../../src/client/core/errors.ts';

const root = mkdtempSync(path.join(os.tmpdir(), 'assay-client-config-'));
after(() => rmSync(root, { recursive: true, force: true }));
let counter = 0;

/** A fresh fake home directory with the given `~/.assay/` files. */
function home(files: { config?: string; credentials?: string } = {}): string {
  const dir = path.join(root, `home-${++counter}`);
  mkdirSync(path.join(dir, '.assay'), { recursive: true });
  const paths = defaultConfigPaths(dir);
  if (files.config !== undefined) writeFileSync(paths.config, files.config);
  if (files.credentials !== undefined) writeFileSync(paths.credentials, files.credentials);
  return dir;
}

/** A YAML file outside any home directory. */
function file(name: string, text: string): string {
  const dir = path.join(root, `files-${++counter}`);
  mkdirSync(dir);
  writeFileSync(path.join(dir, name), text);
  return path.join(dir, name);
}

// Fake keys are assembled so no committed line looks like a real one.
const HEX = '0123456789abcdef';
const KEY = `sk_user_${HEX}WXYZ`;
const configError = (pattern: RegExp) => (error: unknown) =>
  error instanceof ConfigError && pattern.test(error.message);

// For each setting: a value per source, as option (typed), env (text), YAML (text) and the resolved value.
const PRECEDENCE: {
  name: SettingName;
  env: string;
  yaml: string;
  option: SettingsOptions[SettingName];
  values: [unknown, unknown, unknown];
  fallback?: unknown;
}[] = [
  {
    name: 'serverUrl',
    env: 'SERVICE_SERVER_URL',
    yaml: 'server_url',
    option: 'https://option.example',
    values: ['https://option.example', 'https://env.example', 'https://file.example'],
    fallback: 'http://127.0.0.1:8080',
  },
  {
    name: 'apiKey',
    env: 'SERVICE_API_KEY',
    yaml: 'api_key',
    option: 'sk_user_opt',
    values: ['sk_user_opt', 'sk_user_env', 'sk_user_file'],
  },
  { name: 'timeout', env: 'SERVICE_TIMEOUT', yaml: 'timeout', option: 5, values: [5, 6.5, 7], fallback: 30 },
  {
    name: 'maxUploadWorkers',
    env: 'SERVICE_MAX_UPLOAD_WORKERS',
    yaml: 'max_upload_workers',
    option: 3,
    values: [3, 4, 5],
    fallback: 2,
  },
  {
    name: 'organizationId',
    env: 'SERVICE_ORGANIZATION_ID',
    yaml: 'organization_id',
    option: 'org-opt',
    values: ['org-opt', 'org-env', 'org-file'],
  },
  {
    name: 'organizationSlug',
    env: 'SERVICE_ORGANIZATION_SLUG',
    yaml: 'organization_slug',
    option: 'opt',
    values: ['opt', 'env', 'file'],
  },
];

void describe('resolveSettings precedence, per setting', () => {
  for (const row of PRECEDENCE) {
    const [fromOption, fromEnv, fromFile] = row.values;
    const keyEnv = row.name === 'apiKey' ? {} : { SERVICE_API_KEY: KEY };
    const envText = String(fromEnv);
    const yamlText = `${row.yaml}: ${JSON.stringify(fromFile)}\n`;

    void it(`${row.name}: an explicit option beats the environment and the files`, () => {
      const homeDir = home({ config: yamlText, credentials: yamlText });
      const resolved = resolveSettings(
        { [row.name]: row.option },
        { env: { ...keyEnv, [row.env]: envText }, homeDir },
      );
      assert.equal(resolved.settings[row.name], fromOption);
      assert.deepEqual(resolved.sources[row.name], { kind: 'option' });
    });

    void it(`${row.name}: the environment beats the files`, () => {
      const homeDir = home({ config: yamlText, credentials: yamlText });
      const resolved = resolveSettings({}, { env: { ...keyEnv, [row.env]: envText }, homeDir });
      assert.equal(resolved.settings[row.name], fromEnv);
      assert.deepEqual(resolved.sources[row.name], { kind: 'env', variable: row.env });
    });

    void it(`${row.name}: config.yaml beats the default`, () => {
      const homeDir = home({ config: yamlText });
      const resolved = resolveSettings({}, { env: keyEnv, homeDir });
      assert.equal(resolved.settings[row.name], fromFile);
      assert.deepEqual(resolved.sources[row.name], {
        kind: 'file',
        path: defaultConfigPaths(homeDir).config,
      });
    });

    if (row.name !== 'apiKey') {
      void it(`${row.name}: ${row.fallback === undefined ? 'unset' : 'the default'} when no source gives it`, () => {
        const resolved = resolveSettings({}, { env: keyEnv, homeDir: home() });
        assert.equal(resolved.settings[row.name], row.fallback);
        assert.deepEqual(
          resolved.sources[row.name],
          row.fallback === undefined ? undefined : { kind: 'default' },
        );
      });
    }
  }

  void it('treats empty and blank values as not given', () => {
    const homeDir = home({ config: 'server_url: ""\ntimeout:\n' });
    const env = { SERVICE_API_KEY: KEY, SERVICE_SERVER_URL: '  ', SERVICE_TIMEOUT: '', SERVICE_CONFIG: '' };
    const { settings } = resolveSettings({ serverUrl: '' }, { env, homeDir });
    assert.equal(settings.serverUrl, 'http://127.0.0.1:8080');
    assert.equal(settings.timeout, 30);
  });

  void it('returns frozen settings, sources and warnings', () => {
    const resolved = resolveSettings({ apiKey: KEY }, { env: {}, homeDir: home() });
    assert.ok(
      Object.isFrozen(resolved) && Object.isFrozen(resolved.settings) && Object.isFrozen(resolved.sources),
    );
    assert.throws(() => Object.assign(resolved.settings, { apiKey: 'x' }), TypeError);
  });
});

void describe('resolveSettings files', () => {
  void it('credentials.yaml beats config.yaml for a key in both; config.yaml fills the rest', () => {
    const homeDir = home({
      config: 'server_url: https://config.example\napi_key: sk_user_fromconfig\ntimeout: 12\n',
      credentials: 'api_key: sk_user_fromcredentials\nserver_url: https://credentials.example\n',
    });
    const { settings, sources } = resolveSettings({}, { env: {}, homeDir });
    const paths = defaultConfigPaths(homeDir);
    assert.equal(settings.apiKey, 'sk_user_fromcredentials');
    assert.equal(settings.serverUrl, 'https://credentials.example');
    assert.equal(settings.timeout, 12);
    assert.deepEqual(sources.apiKey, { kind: 'file', path: paths.credentials });
    assert.deepEqual(sources.timeout, { kind: 'file', path: paths.config });
  });

  void it('SERVICE_CONFIG names a single file that replaces both default files', () => {
    const homeDir = home({
      config: 'timeout: 12\nmax_upload_workers: 9\n',
      credentials: `api_key: ${KEY}\n`,
    });
    const single = file('combined.yaml', 'api_key: sk_agent_single\ntimeout: 40\n');
    const { settings, sources } = resolveSettings({}, { env: { SERVICE_CONFIG: single }, homeDir });
    assert.equal(settings.apiKey, 'sk_agent_single');
    assert.equal(settings.timeout, 40);
    assert.equal(settings.maxUploadWorkers, 2, 'config.yaml is not read');
    assert.deepEqual(sources.apiKey, { kind: 'file', path: single });
  });

  void it('with SERVICE_CONFIG, a key only in the default credentials.yaml is not found', () => {
    const homeDir = home({ credentials: `api_key: ${KEY}\n` });
    const single = file('only-config.yaml', 'timeout: 40\n');
    assert.throws(
      () => resolveSettings({}, { env: { SERVICE_CONFIG: single }, homeDir }),
      configError(/no API key/),
    );
  });

  void it('the environment still beats the SERVICE_CONFIG file; ~/ expands to the home directory', () => {
    const homeDir = home();
    writeFileSync(path.join(homeDir, 'team.yaml'), 'api_key: sk_user_file\ntimeout: 40\n');
    const env = { SERVICE_CONFIG: '~/team.yaml', SERVICE_TIMEOUT: '8' };
    const { settings } = resolveSettings({}, { env, homeDir });
    assert.equal(settings.apiKey, 'sk_user_file');
    assert.equal(settings.timeout, 8);
  });

  void it('a SERVICE_CONFIG file that does not exist is an error; missing default files are not', () => {
    const env = { SERVICE_API_KEY: KEY, SERVICE_CONFIG: path.join(root, 'nope.yaml') };
    assert.throws(
      () => resolveSettings({}, { env, homeDir: home() }),
      configError(/nope\.yaml: file not found/),
    );
    assert.equal(
      resolveSettings({}, { env: { SERVICE_API_KEY: KEY }, homeDir: path.join(root, 'no-home') }).settings
        .apiKey,
      KEY,
    );
  });

  void it('ignores unknown keys, reporting them as warnings; an empty file is fine', () => {
    const homeDir = home({
      config: 'apikey: typo\ncolor: blue\ntimeout: 3\n',
      credentials: '# nothing yet\n',
    });
    const resolved = resolveSettings({ apiKey: KEY }, { env: {}, homeDir });
    assert.equal(resolved.settings.timeout, 3);
    assert.deepEqual(resolved.warnings, [
      `ignored unknown key "apikey" in ${defaultConfigPaths(homeDir).config}`,
      `ignored unknown key "color" in ${defaultConfigPaths(homeDir).config}`,
    ]);
  });
});

void describe('resolveSettingsFromFile', () => {
  void it('ignores SERVICE_* variables, SERVICE_CONFIG and the home directory', (t) => {
    const homeDir = home({ credentials: 'api_key: sk_user_fromhome\n', config: 'timeout: 99\n' });
    const single = file('service-config.yaml', 'api_key: sk_user_fromserviceconfig\n');
    // Set on the real environment (replacing process.env would not reach os.homedir()), restored after.
    const changes = {
      HOME: homeDir,
      SERVICE_API_KEY: 'sk_user_fromenv',
      SERVICE_TIMEOUT: '77',
      SERVICE_CONFIG: single,
    };
    const saved = Object.keys(changes).map((name) => [name, process.env[name]] as const);
    t.after(() => {
      for (const [name, value] of saved) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    });
    Object.assign(process.env, changes);
    assert.equal(os.homedir(), homeDir, 'the test really points HOME at a home with credentials');
    assert.equal(
      resolveSettings().settings.apiKey,
      'sk_user_fromenv',
      'the environment-reading variant sees it',
    );
    const config = file('config.yaml', 'server_url: https://file.example\n');
    const resolved = resolveSettingsFromFile(config, undefined, { apiKey: KEY });
    assert.equal(resolved.settings.timeout, 30);
    assert.equal(resolved.settings.serverUrl, 'https://file.example');
    assert.throws(
      () => resolveSettingsFromFile(config),
      configError(/no API key: pass apiKey or put api_key in/),
    );
  });

  void it('takes a combined file as config', () => {
    const combined = file(
      'combined.yaml',
      `api_key: ${KEY}\norganization_slug: acme\nmax_upload_workers: 4\n`,
    );
    const { settings, sources } = resolveSettingsFromFile(combined);
    assert.equal(settings.apiKey, KEY);
    assert.equal(settings.organizationSlug, 'acme');
    assert.equal(settings.maxUploadWorkers, 4);
    assert.deepEqual(sources.serverUrl, { kind: 'default' });
  });

  void it('lets the credentials file beat the config file, and options beat both', () => {
    const config = file(
      'config.yaml',
      'api_key: sk_user_config\ntimeout: 10\nserver_url: https://c.example\n',
    );
    const credentials = file('credentials.yaml', 'api_key: sk_user_credentials\ntimeout: 20\n');
    const { settings } = resolveSettingsFromFile(config, credentials, { timeout: 1 });
    assert.equal(settings.apiKey, 'sk_user_credentials');
    assert.equal(settings.timeout, 1);
    assert.equal(settings.serverUrl, 'https://c.example');
    assert.equal(resolveSettingsFromFile(undefined, credentials).settings.apiKey, 'sk_user_credentials');
  });

  void it('requires the given files to exist', () => {
    assert.throws(
      () => resolveSettingsFromFile(path.join(root, 'missing.yaml')),
      configError(/missing\.yaml: file not found/),
    );
  });
});

void describe('configuration errors', () => {
  void it('raises ConfigError when no source gives an API key', () => {
    assert.throws(
      () => resolveSettings({}, { env: {}, homeDir: home({ config: 'timeout: 3\n' }) }),
      configError(/^no API key: pass apiKey, set SERVICE_API_KEY, or run `assay auth login`$/),
    );
  });

  void it('inspectSettings tolerates a missing key but still resolves everything else', () => {
    const { settings, sources } = inspectSettings({}, { env: {}, homeDir: home({ config: 'timeout: 3\n' }) });
    assert.equal(settings.apiKey, undefined);
    assert.equal(sources.apiKey, undefined);
    assert.equal(settings.timeout, 3);
  });

  void it('rejects an organization id and slug from the same source', () => {
    const env = { SERVICE_API_KEY: KEY, SERVICE_ORGANIZATION_ID: 'o1', SERVICE_ORGANIZATION_SLUG: 'acme' };
    assert.throws(
      () => resolveSettings({}, { env, homeDir: home() }),
      configError(/not both: SERVICE_ORGANIZATION_ID and SERVICE_ORGANIZATION_SLUG/),
    );
    const homeDir = home({ config: 'organization_id: o1\norganization_slug: acme\n' });
    assert.throws(
      () => resolveSettings({ apiKey: KEY }, { env: {}, homeDir }),
      configError(/organization_id in .*config\.yaml and organization_slug/),
    );
    assert.throws(
      () =>
        resolveSettings(
          { apiKey: KEY, organizationId: 'o', organizationSlug: 's' },
          { env: {}, homeDir: home() },
        ),
      ConfigError,
    );
  });

  void it('lets the highest source naming an organization decide it, so id and slug never both resolve', () => {
    const homeDir = home({
      config: 'organization_id: from-config\n',
      credentials: 'organization_slug: from-credentials\n',
    });
    const fromFiles = resolveSettings({ apiKey: KEY }, { env: {}, homeDir });
    assert.deepEqual(
      [fromFiles.settings.organizationId, fromFiles.settings.organizationSlug],
      [undefined, 'from-credentials'],
    );
    const env = { SERVICE_ORGANIZATION_SLUG: 'from-env' };
    const fromEnv = resolveSettings({ apiKey: KEY }, { env, homeDir });
    assert.deepEqual(
      [fromEnv.settings.organizationId, fromEnv.settings.organizationSlug],
      [undefined, 'from-env'],
    );
    assert.equal(fromEnv.sources.organizationId, undefined);
    const fromOption = resolveSettings({ apiKey: KEY, organizationId: PERSONAL }, { env, homeDir });
    assert.deepEqual(
      [fromOption.settings.organizationId, fromOption.settings.organizationSlug],
      ['personal', undefined],
    );
  });

  void it('rejects non-numeric and non-positive timeouts and worker counts, naming the source', () => {
    const bad: [SettingsOptions, Record<string, string>, RegExp][] = [
      [{}, { SERVICE_TIMEOUT: 'abc' }, /^SERVICE_TIMEOUT must be a positive number of seconds, got "abc"$/],
      [{}, { SERVICE_TIMEOUT: '0' }, /SERVICE_TIMEOUT/],
      [{}, { SERVICE_TIMEOUT: '-5' }, /SERVICE_TIMEOUT/],
      [{}, { SERVICE_TIMEOUT: 'Infinity' }, /SERVICE_TIMEOUT/],
      [{}, { SERVICE_MAX_UPLOAD_WORKERS: 'two' }, /^SERVICE_MAX_UPLOAD_WORKERS must be a positive integer/],
      [{}, { SERVICE_MAX_UPLOAD_WORKERS: '1.5' }, /SERVICE_MAX_UPLOAD_WORKERS/],
      [{}, { SERVICE_MAX_UPLOAD_WORKERS: '0' }, /SERVICE_MAX_UPLOAD_WORKERS/],
      [{ timeout: 0 }, {}, /^option timeout must be a positive number/],
      [{ maxUploadWorkers: -1 }, {}, /^option maxUploadWorkers must be a positive integer/],
    ];
    for (const [options, env, pattern] of bad) {
      assert.throws(
        () => resolveSettings(options, { env: { SERVICE_API_KEY: KEY, ...env }, homeDir: home() }),
        configError(pattern),
      );
    }
    const homeDir = home({ config: 'timeout: soon\n' });
    assert.throws(
      () => resolveSettings({ apiKey: KEY }, { env: {}, homeDir }),
      configError(/^timeout in .*config\.yaml must be/),
    );
  });

  void it('checks only the value that wins, so a shadowed bad value is harmless', () => {
    const homeDir = home({ config: 'timeout: soon\n' });
    assert.equal(
      resolveSettings({ apiKey: KEY }, { env: { SERVICE_TIMEOUT: '2.5' }, homeDir }).settings.timeout,
      2.5,
    );
  });

  void it('rejects a server URL that is not http(s) and strips trailing slashes', () => {
    const env = { SERVICE_API_KEY: KEY, SERVICE_SERVER_URL: 'ftp://x' };
    assert.throws(
      () => resolveSettings({}, { env, homeDir: home() }),
      configError(/^SERVICE_SERVER_URL must be an http\(s\) URL/),
    );
    const ok = resolveSettings({ serverUrl: 'https://assay.example/api//' }, { env, homeDir: home() });
    assert.equal(ok.settings.serverUrl, 'https://assay.example/api');
  });

  void it('rejects wrongly typed YAML values and keys with whitespace inside', () => {
    assert.throws(
      () => resolveSettings({}, { env: {}, homeDir: home({ credentials: 'api_key: 12345\n' }) }),
      configError(/api_key in .* must be a string/),
    );
    assert.throws(
      () => resolveSettings({ apiKey: 'sk_user_a b' }, { env: {}, homeDir: home() }),
      configError(/whitespace/),
    );
  });

  void it('names the file, line and column of invalid YAML', () => {
    const homeDir = home({ credentials: `api_key: ${KEY}\ntimeout: [1, 2\nserver_url: x\n` });
    const credentials = defaultConfigPaths(homeDir).credentials;
    assert.throws(
      () => resolveSettings({}, { env: {}, homeDir }),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.ok(error.message.startsWith(`${credentials}:3:1: invalid YAML: `), error.message);
        return true;
      },
    );
    const duplicate = home({ config: 'timeout: 1\ntimeout: 2\n' });
    assert.throws(
      () => resolveSettings({ apiKey: KEY }, { env: {}, homeDir: duplicate }),
      configError(/config\.yaml:2:1: invalid YAML: Map keys must be unique$/),
    );
  });

  void it('rejects a YAML file whose top level is not a mapping', () => {
    assert.throws(
      () => resolveSettings({ apiKey: KEY }, { env: {}, homeDir: home({ config: '- a\n- b\n' }) }),
      configError(/top level must be a mapping.*got a list/),
    );
    assert.throws(
      () => resolveSettings({ apiKey: KEY }, { env: {}, homeDir: home({ config: 'just text\n' }) }),
      configError(/got a string/),
    );
  });

  void it('rejects a config path that is a directory', () => {
    const env = { SERVICE_API_KEY: KEY, SERVICE_CONFIG: root };
    assert.throws(
      () => resolveSettings({}, { env, homeDir: home() }),
      configError(/cannot read client config file .*: is a directory/),
    );
  });
});

void describe('display helpers', () => {
  void it('maskKey keeps the sk_ prefix and the last 4 characters', () => {
    assert.equal(maskKey(`sk_user_${HEX}WXYZ`), 'sk_user_****WXYZ');
    assert.equal(maskKey(`sk_agent_${HEX}9876`), 'sk_agent_****9876');
    assert.equal(maskKey(`sk_worker_${HEX}QRST`), 'sk_worker_****QRST');
    assert.equal(maskKey('eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ1In0.c2lnbmF0dXJl'), '****dXJl');
  });

  void it('maskKey shows nothing of a short secret', () => {
    assert.equal(maskKey('sk_user_short'), 'sk_user_****');
    assert.equal(maskKey('abc'), '****');
    assert.equal(maskKey(''), '****');
  });

  void it('describeSource gives one line per kind of source', () => {
    assert.equal(describeSource({ kind: 'option' }), 'explicit option');
    assert.equal(describeSource({ kind: 'env', variable: 'SERVICE_API_KEY' }), 'env SERVICE_API_KEY');
    assert.equal(
      describeSource({ kind: 'file', path: '/h/.assay/credentials.yaml' }),
      'file /h/.assay/credentials.yaml',
    );
    assert.equal(describeSource({ kind: 'default' }), 'default');
  });

  void it('PERSONAL is the wire value for personal scope', () => {
    assert.equal(PERSONAL, 'personal');
  });
});
