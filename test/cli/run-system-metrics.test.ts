// `assay run` samples the command's CPU and memory and each GPU nvidia-smi reports, as metrics under system/.
import assert from 'node:assert/strict';
import { chmod, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from '../../src/client/index.ts';
import { runCli, tempHome } from '../support/cli.ts';
import { committedExperiment, createRun } from '../support/fixtures.ts';
import { startTestService, type TestService } from '../support/service.ts';

// About 80 MB held and one core busy for 3.5 s.
const BUSY = 'import time\nx = [0] * 10**7\nt = time.time()\nwhile time.time() - t < 3.5: pass\n';

describe('assay run: system metrics', () => {
  let t: TestService;
  let key: string;
  let home: string;
  let experimentId: string;
  let client: Client;
  let bin: string;
  let calls: string;

  before(async () => {
    t = await startTestService({ listen: true });
    key = (await t.createUser()).key;
    home = await tempHome();
    experimentId = (await committedExperiment(t, key)).id;
    client = new Client({ serverUrl: t.url, apiKey: key });
    bin = path.join(home, 'bin');
    calls = path.join(home, 'nvidia-smi-calls.log');
    await mkdir(bin);
  });
  after(async () => {
    client.close();
    await t.close();
    await rm(home, { recursive: true, force: true });
  });

  /** A fake nvidia-smi on PATH: `-L` lists two GPUs, the query answers `query` (or fails when null). */
  async function fakeNvidiaSmi(query: string | null) {
    const file = path.join(bin, 'nvidia-smi');
    const answer = query === null ? 'echo "NVIDIA-SMI has failed" >&2; exit 9' : `printf '${query}'`;
    await writeFile(
      file,
      `#!/bin/sh\necho "$*" >> '${calls}'\nif [ "$1" = -L ]; then echo "GPU 0: Fake"; echo "GPU 1: Fake"; exit 0; fi\n${answer}\n`,
    );
    await chmod(file, 0o755);
  }

  async function assayRun(pathDirs: string[], flags: string[], env: Record<string, string> = {}) {
    const { r } = await createRun(t, key, experimentId);
    const result = await runCli(
      ['run', '--experiment', experimentId, '--variation', '1', '--run', String(r), ...flags],
      {
        home,
        env: {
          SERVICE_SERVER_URL: t.url,
          SERVICE_API_KEY: key,
          PATH: [...pathDirs, process.env.PATH].join(':'),
          ...env,
        },
      },
    );
    assert.equal(result.code, 0, result.stderr);
    const keys = (await client.runs.metrics(experimentId, 1, r)).map((m) => m.key);
    const points = async (k: string) =>
      (await client.runs.metricSeries(experimentId, 1, r, k)).points.map((p) => [p.step, p.value]);
    return { r, result, keys, points };
  }

  it('logs CPU %, RSS and each GPU’s utilisation, memory and power at whole seconds since the start', async () => {
    await fakeNvidiaSmi('0, 45, 1234, 67.89\\n1, [N/A], 100, [Not Supported]\\n');
    const { keys, points } = await assayRun(
      [bin],
      ['--system-metrics-interval', '1', '--', 'python3', '-c', BUSY],
    );
    assert.deepEqual(keys, [
      'system/cpu_percent',
      'system/gpu0/memory_used_mb',
      'system/gpu0/power_w',
      'system/gpu0/utilization_percent',
      'system/gpu1/memory_used_mb',
      'system/rss_mb',
    ]);
    const gpu = await points('system/gpu0/power_w');
    assert.ok(gpu.length >= 2, JSON.stringify(gpu));
    assert.deepEqual(new Set(gpu.map(([, v]) => v)), new Set([67.89]));
    assert.deepEqual(
      new Set((await points('system/gpu0/utilization_percent')).map(([, v]) => v)),
      new Set([45]),
    );
    assert.deepEqual(
      new Set((await points('system/gpu0/memory_used_mb')).map(([, v]) => v)),
      new Set([1234]),
    );
    assert.deepEqual(new Set((await points('system/gpu1/memory_used_mb')).map(([, v]) => v)), new Set([100]));
    // Steps are whole seconds since the command started, rising.
    const steps = gpu.map(([s]) => s as number);
    assert.ok(
      steps.every((s, i) => Number.isInteger(s) && s >= 1 && (i === 0 || s > steps[i - 1]!)),
      String(steps),
    );
    const rss = (await points('system/rss_mb')).map(([, v]) => v as number);
    assert.ok(Math.max(...rss) > 40, String(rss));
    const cpu = (await points('system/cpu_percent')).map(([, v]) => v as number);
    assert.ok(Math.max(...cpu) > 5 && Math.min(...cpu) >= 0, String(cpu));
  });

  it('without nvidia-smi: CPU and memory only, no error; with the interval 0 (ASSAY_RUN_SYSTEM_METRICS_S): none', async () => {
    await rm(path.join(bin, 'nvidia-smi'), { force: true });
    const { keys, result } = await assayRun(
      [],
      ['--system-metrics-interval', '1', '--', 'python3', '-c', BUSY],
    );
    assert.deepEqual(keys, ['system/cpu_percent', 'system/rss_mb']);
    assert.doesNotMatch(result.stderr, /nvidia|system metrics/i);

    const off = await assayRun([], ['--', 'python3', '-c', 'import time; time.sleep(1.5)'], {
      ASSAY_RUN_SYSTEM_METRICS_S: '0',
    });
    assert.deepEqual(off.keys, []);
  });

  it('keeps the GPUs CUDA_VISIBLE_DEVICES names (a managed run’s granted ones), by nvidia-smi’s index', async () => {
    await fakeNvidiaSmi('0, 45, 1234, 67.89\\n1, 99, 200, 300\\n');
    const { keys, points } = await assayRun(
      [bin],
      ['--system-metrics-interval', '1', '--', 'python3', '-c', 'import time; time.sleep(2.5)'],
      { CUDA_VISIBLE_DEVICES: '1' },
    );
    assert.deepEqual(
      keys.filter((k) => k.includes('gpu')),
      ['system/gpu1/memory_used_mb', 'system/gpu1/power_w', 'system/gpu1/utilization_percent'],
    );
    assert.deepEqual(new Set((await points('system/gpu1/power_w')).map(([, v]) => v)), new Set([300]));
  });

  it('a failing nvidia-smi is reported once and not asked again; CPU and memory go on', async () => {
    await fakeNvidiaSmi(null);
    await rm(calls, { force: true });
    const { keys, result } = await assayRun(
      [bin],
      ['--system-metrics-interval', '1', '--', 'python3', '-c', BUSY],
    );
    assert.deepEqual(keys, ['system/cpu_percent', 'system/rss_mb']);
    assert.equal(result.stderr.match(/nvidia-smi failed/g)?.length, 1, result.stderr);
    const queries = (await readFile(calls, 'utf8')).split('\n').filter((l) => l.startsWith('--query-gpu'));
    assert.equal(queries.length, 1);
  });
});
