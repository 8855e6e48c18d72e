// The Python SDK's "done when", as a user meets it: a fresh virtualenv of Python 3.9 (the oldest the package
// claims), `pip install ./sdk/python` with its dependencies from the index, and the README's snippet (the
// standalone form: real steps, a directory checkpoint saved and loaded, finish) against a fresh `assay server`
// started as `npm start` starts it (a new data dir, every embedded default). The run, its metrics and its
// checkpoint are then read back over the REST API. The same venv then takes `pip install "./sdk/python[dev]"`
// and runs the offline conformance cases and `mypy --strict` checking as 3.9.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { repoRoot, startAssayServer, type AssayServer } from '../support/assay-server.ts';

/** pyenv's 3.9 on the developers' machines and CI's; ASSAY_PYTHON39 names another. */
const PYTHON39 = process.env.ASSAY_PYTHON39 ?? '/root/.pyenv/versions/3.9.18/bin/python3.9';
const sdk = path.join(repoRoot, 'sdk/python');

interface Ran {
  code: number;
  output: string;
  stdout: string;
}

function run(
  command: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv },
): Promise<Ran> {
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      { cwd: options.cwd, env: options.env, maxBuffer: 64 * 1024 * 1024, timeout: 900_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, output: `${stdout}${stderr}`, stdout });
      },
    );
  });
}

function assertRan(ran: Ran, what: string): void {
  assert.equal(ran.code, 0, `${what} exited ${ran.code}:\n${ran.output.slice(-20_000)}`);
}

// The snippet, standalone: 50 real steps, a checkpoint directory, its load, the end.
const SNIPPET = `
import json, math, os, sys
import assay

steps = 50
run = assay.init(experiment=sys.argv[1], variation=1)
lr = run.config["optimizer"]["lr"]
for step in range(steps):
    loss, acc = math.exp(-lr * step), step / steps
    run.log({"loss": loss, "acc": acc}, step=step)
os.makedirs("ckpt/opt", exist_ok=True)
with open("ckpt/weights.bin", "wb") as f:
    f.write(bytes(range(256)) * 64)
with open("ckpt/opt/state.json", "w") as f:
    json.dump({"step": steps - 1, "lr": lr}, f)
asset = run.save_checkpoint("ckpt/")
state = run.load_checkpoint()
print(json.dumps({"r": run.r, "asset": asset["id"], "state": str(state), "python": sys.version_info[:2],
                  "weights": (state / "weights.bin").read_bytes() == bytes(range(256)) * 64,
                  "opt": json.loads((state / "opt" / "state.json").read_text())}))
run.finish()
`;

describe(
  'Python SDK in a fresh Python 3.9 virtualenv against a fresh `assay server`',
  { timeout: 1_200_000 },
  () => {
    let work: string;
    let server: AssayServer | undefined;
    let venvPython: string;
    // The machine's environment less anything that would let the venv see another copy of the package.
    const baseEnv = () => {
      const env: NodeJS.ProcessEnv = { ...process.env, HOME: path.join(work, 'home') };
      for (const name of Object.keys(env))
        if (name === 'PYTHONPATH' || name === 'VIRTUAL_ENV' || name.startsWith('SERVICE_')) delete env[name];
      return env;
    };

    before(async () => {
      assert.ok(
        existsSync(PYTHON39),
        `Python 3.9 is needed to prove the SDK's "Python ≥ 3.9": ${PYTHON39} does not exist ` +
          '(pyenv install 3.9.18, or set ASSAY_PYTHON39 to a python3.9)',
      );
      work = await mkdtemp(path.join(tmpdir(), 'assay-py39-'));
      await mkdir(path.join(work, 'home'));
      const venv = path.join(work, 'venv');
      assertRan(
        await run(PYTHON39, ['-m', 'venv', venv], { cwd: work, env: baseEnv() }),
        'python3.9 -m venv',
      );
      venvPython = path.join(venv, 'bin/python');
    });
    after(async () => {
      await server?.stop();
      if (work) await rm(work, { recursive: true, force: true });
    });

    it('`pip install ./sdk/python` installs the package and its dependencies from the index', async () => {
      assertRan(
        await run(venvPython, ['-m', 'pip', 'install', '--quiet', './sdk/python'], {
          cwd: repoRoot,
          env: baseEnv(),
        }),
        'pip install ./sdk/python',
      );
      const imported = await run(
        venvPython,
        ['-c', 'import sys, assay, assay.models, httpx, yaml; print(sys.version_info[:2], assay.__file__)'],
        { cwd: work, env: baseEnv() },
      );
      assertRan(imported, 'importing assay');
      assert.match(
        imported.stdout,
        /^\(3, 9\) \S+\/venv\/lib\/python3\.9\/site-packages\/assay\/__init__\.py\n$/,
      );
    });

    it('runs the README’s snippet against a fresh `assay server`; the service holds the run, its metrics and its checkpoint', async () => {
      const dataDir = path.join(work, 'data');
      server = await startAssayServer({ ASSAY_DATA_DIR: dataDir });
      assert.ok(server.bootstrapKey, 'a fresh data dir bootstraps an admin');
      const api = async (method: string, route: string, key: string, body?: unknown) => {
        const res = await fetch(`${server!.url}${route}`, {
          method,
          headers: {
            authorization: `Bearer ${key}`,
            ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        const text = await res.text();
        assert.ok(res.ok, `${method} ${route}: ${res.status} ${text}`);
        return text ? JSON.parse(text) : undefined;
      };
      const user = await api('POST', '/admin/users', server.bootstrapKey, { email: 'py39@example.test' });
      const key: string = user.api_key.key;
      const experiment: string = (await api('POST', '/experiments', key, { name: 'py39 snippet' })).id;
      await api('POST', `/experiments/${experiment}/variations`, key, {
        config_yaml: 'optimizer:\n  lr: 0.01\n',
      });
      await api('POST', `/experiments/${experiment}/commit`, key);

      const script = path.join(work, 'snippet.py');
      await writeFile(script, SNIPPET);
      const ran = await run(venvPython, [script, experiment], {
        cwd: work,
        env: { ...baseEnv(), SERVICE_SERVER_URL: server.url, SERVICE_API_KEY: key },
      });
      assertRan(ran, 'the snippet');
      const out = JSON.parse(ran.stdout.trim().split('\n').at(-1)!);
      assert.deepEqual([out.python, out.weights, out.opt], [[3, 9], true, { step: 49, lr: 0.01 }]);

      const runPath = `/experiments/${experiment}/variations/1/runs/${out.r}`;
      const stored = await api('GET', runPath, key);
      assert.equal(stored.state, 'succeeded', JSON.stringify(stored));
      assert.match(stored.environment.python, /^3\.9\./);
      for (const metric of ['loss', 'acc']) {
        const series = await api('GET', `${runPath}/metrics/${metric}?limit=1000`, key);
        assert.deepEqual(
          series.points.map((p: { step: number }) => p.step),
          Array.from({ length: 50 }, (_, i) => i),
          metric,
        );
      }
      const loss = await api('GET', `${runPath}/metrics/loss?limit=1000`, key);
      assert.ok(
        Math.abs(loss.points[10].value - Math.exp(-0.01 * 10)) < 1e-12,
        JSON.stringify(loss.points[10]),
      );
      const assets = await api('GET', `/assets?experiment_id=${experiment}&kind=checkpoint`, key);
      assert.deepEqual(
        assets.items.map((a: { id: string; state: string; run_id: string }) => [a.id, a.state, a.run_id]),
        [[out.asset, 'ready', stored.id]],
      );
      assert.deepEqual(Object.keys(assets.items[0].components).sort(), ['opt/state.json', 'weights.bin']);
      assert.equal(assets.items[0].components['weights.bin'].size, 256 * 64);
      const checkpoint = await api('GET', `${runPath}/checkpoint`, key);
      assert.equal(checkpoint.asset.id, out.asset);
      const restored = await readFile(path.join(out.state, 'weights.bin'));
      assert.equal(restored.length, 256 * 64);
    });

    it('`pip install "./sdk/python[dev]"` works on 3.9: the offline conformance cases pass and mypy --strict checks as 3.9', async () => {
      assertRan(
        await run(venvPython, ['-m', 'pip', 'install', '--quiet', './sdk/python[dev]'], {
          cwd: repoRoot,
          env: baseEnv(),
        }),
        'pip install "./sdk/python[dev]"',
      );
      // The cases that need no `assay server` (test_service starts one; the suite on the dev venv runs it),
      // against the installed package: nothing puts sdk/python/src on the path.
      const conformance = await run(
        venvPython,
        [
          '-m',
          'pytest',
          '-q',
          '-p',
          'no:cacheprovider',
          'tests/test_conformance.py',
          '-k',
          'not test_service',
        ],
        { cwd: sdk, env: baseEnv() },
      );
      assertRan(conformance, 'pytest tests/test_conformance.py (offline cases) on Python 3.9');
      assert.match(conformance.output, /\b\d{2,} passed, \d+ deselected\b/);
      assert.doesNotMatch(conformance.output, /skipped/);
      assertRan(
        await run(venvPython, ['-m', 'mypy', '--strict', '--python-version', '3.9', 'src'], {
          cwd: sdk,
          env: baseEnv(),
        }),
        'mypy --strict --python-version 3.9 src',
      );
    });
  },
);
