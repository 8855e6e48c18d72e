// The Python SDK's checks inside `npm test`: its pytest suite (sdk/python/tests, one case here per test file,
// from one pytest run), mypy --strict, ruff, and the wheel build with a plain `pip install ./sdk/python`.
// Its tools live in ./.venv-sdk (scripts/setup-python-sdk.sh, run here too so a lone run of this file works).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

const repoRoot = path.resolve(import.meta.dirname, '../..');
const sdk = path.join(repoRoot, 'sdk/python');
const bin = (tool: string) => path.join(repoRoot, '.venv-sdk/bin', tool);

interface Ran {
  code: number;
  output: string;
}

/** Runs a command to its end; never rejects, so a case can print the output of a failure. */
function run(
  command: string,
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<Ran> {
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      {
        cwd: options.cwd ?? sdk,
        // The pytest fixtures start `assay server` and the spec script with this Node (the project's 24).
        env: { ...process.env, ASSAY_NODE: process.execPath, ...options.env },
        maxBuffer: 64 * 1024 * 1024,
      },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, output: `${stdout}${stderr}` });
      },
    );
  });
}

function assertRan(ran: Ran, what: string): void {
  assert.equal(ran.code, 0, `${what} exited ${ran.code}:\n${ran.output.slice(-20_000)}`);
}

describe('Python SDK (sdk/python)', { timeout: 1_800_000 }, () => {
  let work: string;
  let pytest: Ran;
  let junit: string;

  before(
    async () => {
      assertRan(
        await run('bash', [path.join(repoRoot, 'scripts/setup-python-sdk.sh')]),
        'setup-python-sdk.sh',
      );
      work = await mkdtemp(path.join(tmpdir(), 'assay-py-sdk-'));
      const report = path.join(work, 'junit.xml');
      pytest = await run(bin('pytest'), ['-q', '-p', 'no:cacheprovider', `--junitxml=${report}`, 'tests']);
      junit = await readFile(report, 'utf8').catch(() => '');
    },
    { timeout: 1_800_000 },
  );
  after(async () => {
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('pytest passes as a whole, with no test skipped', () => {
    assertRan(pytest, 'pytest');
    assert.doesNotMatch(pytest.output, /\d+ skipped/, pytest.output.slice(-4000));
  });

  // One case per test file, so a failure names its file in the suite's count.
  const files = readdirSync(path.join(sdk, 'tests'));
  for (const file of files.filter((f) => /^test_.*\.py$/.test(f)).sort()) {
    it(`pytest: ${file}`, () => {
      const module = `tests.${file.replace(/\.py$/, '')}`;
      const cases = [...junit.matchAll(/<testcase\b([^>]*?)(?:\/>|>([\s\S]*?)<\/testcase>)/g)].filter(
        ([, attrs]) => attrs!.includes(`classname="${module}"`) || attrs!.includes(`classname="${module}.`),
      );
      assert.ok(cases.length > 0, `no test of ${file} ran:\n${pytest.output.slice(-8000)}`);
      const failed = cases.filter(([, , inner]) => /<(failure|error|skipped)\b/.test(inner ?? ''));
      assert.deepEqual(
        failed.map(([attrs]) => /name="([^"]*)"/.exec(attrs!)?.[1]),
        [],
        `${failed.length} of ${cases.length} failed:\n${pytest.output.slice(-20_000)}`,
      );
    });
  }

  it('mypy --strict is clean', async () => {
    assertRan(await run(bin('mypy'), []), 'mypy (strict = true in pyproject.toml)');
  });

  it('ruff check and ruff format --check are clean (the SDK, its example and its benchmark)', async () => {
    // The example and the benchmark live outside sdk/python: named here, with the SDK's settings. mypy takes
    // the same files from pyproject.toml.
    const files = ['.', '../../examples', '../../bench/python-sdk.py', '../../bench/python_sdk_service.py'];
    const config = ['--config', 'pyproject.toml'];
    assertRan(await run(bin('ruff'), ['check', ...config, ...files]), 'ruff check');
    assertRan(await run(bin('ruff'), ['format', '--check', ...config, ...files]), 'ruff format --check');
  });

  it('builds a wheel holding the typed package', async () => {
    const out = path.join(work, 'dist');
    assertRan(
      await run(bin('python'), ['-m', 'build', '--wheel', '--no-isolation', '--outdir', out]),
      'python -m build --wheel',
    );
    const wheels = (await readdir(out)).filter((f) => f.endsWith('.whl'));
    assert.deepEqual(wheels, ['assay_client-0.1.0-py3-none-any.whl']);
    const listing = await run(bin('python'), ['-m', 'zipfile', '-l', path.join(out, wheels[0]!)]);
    assertRan(listing, 'listing the wheel');
    for (const member of ['assay/__init__.py', 'assay/py.typed', 'assay/models.py', 'assay/client.py']) {
      assert.match(listing.output, new RegExp(member.replace('.', '\\.')), member);
    }
  });

  it('`pip install ./sdk/python` installs a package that imports', async () => {
    const target = path.join(work, 'site');
    // --no-deps --no-build-isolation: its dependencies and hatchling are the dev venv's (no index needed).
    assertRan(
      await run(
        bin('pip'),
        ['install', '--quiet', '--no-deps', '--no-build-isolation', '--target', target, sdk],
        {
          cwd: repoRoot,
        },
      ),
      'pip install ./sdk/python',
    );
    const imported = await run(
      bin('python'),
      ['-c', 'import assay, sys; print(assay.__file__); print(assay.Client.__name__, assay.PERSONAL)'],
      { cwd: work, env: { PYTHONPATH: target } },
    );
    assertRan(imported, 'importing the installed package');
    assert.match(imported.output, new RegExp(`^${target}/assay/__init__\\.py\\nClient personal\\n$`));
  });
});
