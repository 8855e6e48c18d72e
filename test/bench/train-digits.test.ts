// The sweep benchmark's training task (bench/sweeps/train_digits.py) keeps working: its metrics lines are what
// `assay run` reads, it takes its hyperparameters from the run's config, and SIGTERM stops it.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parseMetricsLine, type MetricsRecord } from '../../src/cli/run-metrics.ts';
import { repoRoot, runCli, tempHome } from '../support/cli.ts';
import { committedExperiment, createRun } from '../support/fixtures.ts';
import { startTestService, type TestService } from '../support/service.ts';

// scripts/setup-test-tools.sh installs scikit-learn into this venv.
const PYTHON = path.join(repoRoot, '.venv/bin/python');
const SCRIPT = path.join(repoRoot, 'bench/sweeps/train_digits.py');

/** Runs the script with flags, metrics on stdout; its exit code and parsed lines. */
async function trainStandalone(args: string[]): Promise<{ code: number | null; records: MetricsRecord[] }> {
  const child = spawn(PYTHON, [SCRIPT, '--metrics-file', '-', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d));
  child.stderr.on('data', (d: Buffer) => (stderr += d));
  const [code] = (await once(child, 'close')) as [number | null];
  assert.equal(stderr, '', 'nothing on stderr (no warnings)');
  return { code, records: stdout.trim().split('\n').map(parsed) };
}

function parsed(line: string): MetricsRecord {
  const record = parseMetricsLine(line);
  assert.notEqual(typeof record, 'string', `${line}: ${String(record)}`);
  return record as MetricsRecord;
}

function assertEpochs(records: MetricsRecord[], epochs: number): void {
  assert.deepEqual(
    records.map((r) => r.step),
    Array.from({ length: epochs }, (_, i) => i + 1),
  );
  for (const { values, timestamp } of records) {
    assert.deepEqual(Object.keys(values).sort(), ['val_acc', 'val_loss']);
    assert.ok(values.val_acc! >= 0 && values.val_acc! <= 1, `val_acc ${values.val_acc}`);
    assert.ok(Number.isFinite(values.val_loss) && values.val_loss! > 0, `val_loss ${values.val_loss}`);
    assert.ok(timestamp instanceof Date && !Number.isNaN(timestamp.getTime()));
  }
}

describe('the sweep benchmark training task', () => {
  it('trains epoch by epoch and logs val_loss and val_acc per epoch, from its flags', async () => {
    const { code, records } = await trainStandalone(['--epochs', '2', '--subset', '300', '--hidden', '8']);
    assert.equal(code, 0);
    assertEpochs(records, 2);
  });

  it('learns: the full enlarged set beats chance by far in a few epochs', async () => {
    const { records } = await trainStandalone(['--epochs', '3', '--lr', '0.003']);
    assert.ok(records.at(-1)!.values.val_acc! > 0.8, JSON.stringify(records.at(-1)));
  });

  it('ends on SIGTERM with status 143, before its epochs are done', async () => {
    const child = spawn(PYTHON, [SCRIPT, '--metrics-file', '-', '--epochs', '100000', '--subset', '200'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let lines = 0;
    child.stdout.on('data', (d: Buffer) => {
      if (lines === 0) child.kill('SIGTERM');
      lines += d.toString().split('\n').length - 1;
    });
    const [code] = (await once(child, 'close')) as [number | null];
    assert.equal(code, 143);
    assert.ok(lines >= 1 && lines < 100000, `${lines} lines`);
  });

  describe('under assay run', () => {
    let t: TestService;
    let key: string;
    let home: string;

    before(async () => {
      t = await startTestService({ listen: true });
      key = (await t.createUser()).key;
      home = await tempHome();
    });
    after(async () => {
      await t.close();
      await rm(home, { recursive: true, force: true });
    });

    it('reads its hyperparameters from the config file and its metrics reach the run', async () => {
      const config = 'epochs: 2\nhidden: 8\nlr: 0.01\nalpha: 0.001\nbatch_size: 32\n';
      const experiment = await committedExperiment(t, key, {}, config);
      const run = await createRun(t, key, experiment.id);
      const result = await runCli(
        ['run', '--experiment', experiment.id, '--variation', '1', '--run', String(run.r)].concat([
          '--outputs',
          path.join(home, 'outputs'),
          '--',
          PYTHON,
          SCRIPT,
          '--subset',
          '300',
        ]),
        { home, env: { SERVICE_SERVER_URL: t.url, SERVICE_API_KEY: key } },
      );
      assert.equal(result.code, 0, result.stderr);
      const detail = await t.as(key).get(run.path);
      assert.equal(detail.body.state, 'succeeded');
      const keys = await t.as(key).get(`${run.path}/metrics`);
      const summary = Object.fromEntries(
        (keys.body.items as { key: string; count: number; last: { step: number } }[]).map((k) => [k.key, k]),
      );
      // epochs: 2 from the config, not the script's default of 20.
      assert.deepEqual(Object.keys(summary).sort(), ['val_acc', 'val_loss']);
      assert.equal(summary.val_acc!.count, 2);
      assert.equal(summary.val_acc!.last.step, 2);
    });
  });
});
