// Sweeps that search, on a real training task (bench/sweeps/train_digits.py: an MLP on scikit-learn's digits,
// enlarged five-fold, 20 epochs, val_loss and val_acc per epoch), the same 4-dimensional space
// (bench/sweeps/space.json), 32 trials, the objective val_acc maximized, early stopping by successive halving
// (min step 1, reduction factor 3), side by side in one run:
//   (a) Optuna in one process, the model trained in the study's own process (the floor);
//   (b) Optuna's loop starting the training script as a process per trial, reading its metrics lines and
//       stopping pruned trials with SIGTERM (the shape of a W&B agent or a Katib trial);
//   (c) Assay: `assay server` (embedded default, or PostgreSQL with --postgres), the `local` provider, the
//       sweep created through the API and polled until done, at concurrency 1 and 2;
//   (d) the same with examples/train_digits_sdk.py, the task written with the Python SDK (--task file,sdk,
//       the default; the two take turns sweep by sweep).
// Each with random search, random + early stopping and TPE + early stopping, over --seeds (medians).
// Run: node bench/sweeps.ts [--trials 32] [--epochs 20] [--seeds 7,8,9] [--quick]
//        [--strategies random,tpe] [--skip-assay] [--skip-baselines] [--postgres] [--python PATH]
//        [--task file,sdk] [--sdk-python PATH]
// (--quick: 8 trials of 5 epochs, one seed, concurrency 1, about a minute, printed and not written;
// --strategies list: Assay runs bench-drawn points as a list sweep, for a tree without searching sweeps.)
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { buildRunner } from '../scripts/build-runner.ts';
import { startAssayServer } from '../test/support/assay-server.ts';
import { startBenchService } from './support/bench-service.ts';
import { machine, median, publish } from './support/report.ts';
import {
  runSweep,
  type SweepCase,
  type SweepOutcome,
  type SweepService,
  type Task,
} from './sweeps/assay-sweep.ts';
import { runStudy, type StudyResult } from './sweeps/baselines.ts';
import { phaseTable } from './sweeps/phases.ts';
import { ratioLines, resultsTable, type Row } from './sweeps/rows.ts';

const { values } = parseArgs({
  options: {
    trials: { type: 'string', default: '32' },
    epochs: { type: 'string', default: '20' },
    seeds: { type: 'string', default: '7,8,9' },
    quick: { type: 'boolean', default: false },
    strategies: { type: 'string', default: 'random,tpe' },
    'skip-assay': { type: 'boolean', default: false },
    'skip-baselines': { type: 'boolean', default: false },
    postgres: { type: 'boolean', default: false },
    python: { type: 'string', default: path.resolve(import.meta.dirname, '../.venv/bench/bin/python') },
    // sdk: Assay's trials run examples/train_digits_sdk.py (the Python SDK's version of the task) with
    // --sdk-python, which has the SDK and scikit-learn (scripts/setup-python-sdk.sh makes .venv-sdk).
    task: { type: 'string', default: 'file,sdk' },
    'sdk-python': { type: 'string', default: path.resolve(import.meta.dirname, '../.venv-sdk/bin/python') },
  },
});
const quick = values.quick;
const trials = quick ? 8 : Number(values.trials);
const epochs = quick ? 5 : Number(values.epochs);
const seeds = (quick ? '7' : values.seeds).split(',').map(Number);
const strategies = values.strategies.split(',') as SweepCase['strategy'][];
const python = values.python;
const tasks = values.task.split(',') as Task[];
for (const task of tasks)
  if (task !== 'file' && task !== 'sdk') throw new Error(`--task lists file and/or sdk, not ${task}`);
const pythonFor = (task: Task) => (task === 'sdk' ? values['sdk-python'] : python);
const log = (line: string) => process.stderr.write(`${line}\n`);

/**
 * (a) and (b): random, random + successive halving, TPE + successive halving, per seed. The two setups take
 * turns study by study, so a change in the machine's load falls on both.
 */
async function baselines(): Promise<Row[]> {
  const rows: Row[] = [];
  for (const [sampler, pruner] of [
    ['random', 'none'],
    ['random', 'sh'],
    ['tpe', 'sh'],
  ] as const) {
    const studies = { inprocess: [] as StudyResult[], subprocess: [] as StudyResult[] };
    for (const seed of seeds)
      for (const mode of ['inprocess', 'subprocess'] as const) {
        const study = await runStudy({ python, mode, sampler, pruner, seed, trials, epochs });
        log(`${mode} ${sampler} ${pruner} seed ${seed}: ${study.wall_s.toFixed(1)} s, best ${study.best}`);
        studies[mode].push(study);
      }
    for (const mode of ['inprocess', 'subprocess'] as const)
      rows.push({
        setup: mode === 'inprocess' ? '(a) Optuna, one process' : '(b) Optuna, a process per trial',
        sampler,
        stopping: pruner === 'sh',
        concurrency: 1,
        wallS: studies[mode].map((s) => s.wall_s),
        best: studies[mode].map((s) => s.best),
        trialEpochs: studies[mode].map((s) => s.trial_epochs),
        stopped: studies[mode].map((s) => s.pruned),
        stopS: studies[mode].flatMap((s) => s.stop_s),
        startS: studies[mode].flatMap((s) => s.start_s),
      });
  }
  return rows.sort((x, y) => x.setup.localeCompare(y.setup));
}

/** The service for (c): `assay server` on its embedded default, or on a fresh PostgreSQL database. */
async function startService(): Promise<SweepService & { stop(): Promise<void> }> {
  await buildRunner(); // the instances run `assay run` from its bundle, as a deployment does
  // The sampler of random and tpe sweeps, which `assay server` runs beside its worker (as `npm start` does).
  const setupSampler = path.resolve(import.meta.dirname, '../scripts/setup-search-worker.sh');
  if (existsSync(setupSampler)) execFileSync('bash', [setupSampler], { stdio: 'inherit' });
  if (values.postgres) {
    const svc = await startBenchService('sweeps', { ASSAY_ORCHESTRATOR: 'on', ASSAY_LOCAL_SANDBOX: 'off' });
    return { url: svc.url, key: svc.key, dataDir: svc.dataDir, stop: () => svc.stop() };
  }
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'assay-bench-sweeps-'));
  // No sandbox: the trials run the bench's Python, which a pyenv install keeps under /root, hidden from the
  // sandbox's user; the bench runs as the admin, whom `local` serves unsandboxed.
  const server = await startAssayServer({ ASSAY_DATA_DIR: dataDir, ASSAY_LOCAL_SANDBOX: 'off' });
  if (!server.bootstrapKey) throw new Error('a fresh data directory must give a bootstrap admin key');
  return {
    url: server.url,
    key: server.bootstrapKey,
    dataDir,
    async stop() {
      await server.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** (c): each strategy with early stopping at concurrency 1 (every seed) and 2; random without, once. */
async function assaySweeps(): Promise<{ rows: Row[]; phases: string[] }> {
  const cases: SweepCase[] = [];
  const search = strategies.filter((s) => s !== 'list');
  const reference = strategies.includes('list') ? 'list' : 'random';
  cases.push({ strategy: reference, earlyStopping: false, concurrency: 1, seed: seeds[0]!, trials, epochs });
  for (const concurrency of quick ? [1] : [1, 2])
    for (const strategy of search)
      for (const seed of concurrency === 1 ? seeds : seeds.slice(0, 1))
        cases.push({ strategy, earlyStopping: true, concurrency, seed, trials, epochs });
  const svc = await startService();
  const outcomes: { c: SweepCase; task: Task; outcome: SweepOutcome | Error }[] = [];
  try {
    for (const c of cases)
      for (const task of tasks) {
        const label = `${task} ${c.strategy}${c.earlyStopping ? ' + asha' : ''} c${c.concurrency} seed ${c.seed}`;
        // Generous: 20 s a trial besides its epochs; a sweep that never ends is reported, not waited on.
        const timeoutMs = c.trials * (20_000 + c.epochs * 2_000);
        const outcome = await runSweep(
          svc,
          c,
          pythonFor(task),
          (s) => log(`${label}: ${JSON.stringify(s.progress)}`),
          timeoutMs,
          task,
        ).catch((error: unknown) => (error instanceof Error ? error : new Error(String(error))));
        log(
          `${label}: ${outcome instanceof Error ? outcome.message : `${(outcome.wallMs / 1000).toFixed(1)} s`}`,
        );
        outcomes.push({ c, task, outcome });
      }
  } finally {
    await svc.stop();
  }
  return assayRows(outcomes);
}

function assayRows(outcomes: { c: SweepCase; task: Task; outcome: SweepOutcome | Error }[]) {
  const rows: Row[] = [];
  const phases: string[] = [];
  const keyOf = (o: { c: SweepCase; task: Task }) =>
    `${o.task}/${o.c.strategy}/${o.c.earlyStopping}/${o.c.concurrency}`;
  for (const key of [...new Set(outcomes.map(keyOf))]) {
    const group = outcomes.filter((o) => keyOf(o) === key);
    const { c, task } = group[0]!;
    const done = group.flatMap((o) => (o.outcome instanceof Error ? [] : [o.outcome]));
    const errors = group.flatMap((o) => (o.outcome instanceof Error ? [o.outcome.message] : []));
    rows.push({
      setup:
        task === 'sdk'
          ? `(d) Assay, SDK script, concurrency ${c.concurrency}`
          : `(c) Assay, concurrency ${c.concurrency}`,
      sampler: c.strategy,
      stopping: c.earlyStopping,
      concurrency: c.concurrency,
      wallS: done.map((o) => o.wallMs / 1000),
      best: done.map((o) => o.best ?? Number.NaN),
      trialEpochs: done.map((o) => o.trialEpochs),
      stopped: done.map((o) => o.stoppedEarly),
      stopS: [],
      startS: [],
      error: errors[0],
    });
    if (done[0])
      phases.push(
        phaseTable(
          `Assay${task === 'sdk' ? ' (SDK script)' : ''} ${c.strategy}${c.earlyStopping ? ' + ASHA' : ''}, concurrency ${c.concurrency}, seed ${c.seed}`,
          done[0],
          c.concurrency,
        ),
      );
  }
  return { rows, phases };
}

const rows: Row[] = [];
if (!values['skip-baselines']) rows.push(...(await baselines()));
const phases: string[] = [];
if (!values['skip-assay']) {
  const assay = await assaySweeps();
  rows.push(...assay.rows);
  phases.push(...assay.phases);
}
// The command as run, less --python (a machine's own path; the block names the Python version instead).
const shown = process.argv.slice(2).filter((a, i, all) => a !== '--python' && all[i - 1] !== '--python');
const command = `node bench/sweeps.ts ${shown.join(' ')}`.trim();
const pythonVersion = execFileSync(python, ['--version'], { encoding: 'utf8' }).trim();
const assayNote = values['skip-assay']
  ? 'Assay not run (--skip-assay)'
  : `Assay on ${values.postgres ? 'PostgreSQL' : 'its embedded default'}, \`local\` provider, production saga timings`;
const text = [
  `## Sweeps that search (\`${command}\`)`,
  '',
  `${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC; ${machine()}. ${trials} trials of up to ${epochs} epochs, seeds ${seeds.join(', ')} (figures are medians over them; per seed in brackets), objective val_acc maximized, ${pythonVersion} with requirements-bench-tools.txt; ${assayNote}.`,
  '',
  resultsTable(rows, median, trials, epochs),
  '',
  ...ratioLines(rows),
  '',
  ...phases.flatMap((p) => [p, '']),
].join('\n');
if (quick) process.stdout.write(`${text}\n`);
else await publish('sweeps', text);
