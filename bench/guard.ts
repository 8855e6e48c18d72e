// The regression guard CI runs after the tests: each benchmark's short `--guard` mode, one after another,
// its ratio lines against the ones recorded in bench/guards.json. It prints; it does not fail the build
// (a shared machine's noise is not a regression), but a ratio that halved is flagged in the log.
//   node bench/guard.ts [--only name,…] [--record]   (--record writes today's ratios to bench/guards.json)
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseGuards, regressed, type Guard } from './support/guard.ts';

/** Each benchmark's guard mode: short (a minute or two), bounded, and self-contained. */
const GUARDED: ReadonlyArray<{ name: string; args: string[] }> = [
  { name: 'runner-traffic', args: ['bench/runner-traffic.ts', '--guard'] },
  { name: 'managed-runs', args: ['bench/managed-runs.ts', '--guard'] },
  { name: 'search', args: ['bench/search.ts', '--guard'] },
  { name: 'web-metrics', args: ['bench/web-metrics.ts', '--guard'] },
  { name: 'web-render', args: ['bench/web-render.ts', '--guard'] },
];

const root = path.resolve(import.meta.dirname, '..');
const recordedFile = path.join(import.meta.dirname, 'guards.json');
const argv = process.argv.slice(2);
const only = argv.includes('--only') ? argv[argv.indexOf('--only') + 1]!.split(',') : undefined;
const record = argv.includes('--record');
const recorded = JSON.parse(readFileSync(recordedFile, 'utf8')) as Record<string, number>;

const results: Guard[] = [];
let failedBenches = 0;
for (const bench of GUARDED) {
  if (only && !only.includes(bench.name)) continue;
  const started = Date.now();
  console.log(`guard: ${bench.name}: node ${bench.args.join(' ')}`);
  const run = spawnSync(process.execPath, bench.args, {
    cwd: root,
    encoding: 'utf8',
    timeout: 10 * 60_000,
    maxBuffer: 64 * 1024 * 1024,
  });
  const guards = parseGuards(run.stdout ?? '');
  if (run.status !== 0 || guards.length === 0) {
    failedBenches++;
    console.log(`guard: ${bench.name} did not finish (exit ${run.status}); its last output:`);
    console.log(`${run.stdout ?? ''}\n${run.stderr ?? ''}`.trim().split('\n').slice(-30).join('\n'));
  }
  console.log(`guard: ${bench.name}: ${((Date.now() - started) / 1000).toFixed(0)} s`);
  results.push(...guards);
}

let flagged = 0;
for (const guard of results) {
  const was = recorded[guard.name];
  const bad = was !== undefined && regressed(guard, was);
  if (bad) flagged++;
  const against = was === undefined ? 'nothing recorded' : `recorded ${was.toFixed(3)}`;
  console.log(
    `${bad ? 'REGRESSED' : 'ratio'} ${guard.name}: ${guard.ratio.toFixed(3)} (${guard.what}; ${guard.higherIsBetter ? 'higher' : 'lower'} is better; ${against})`,
  );
}
if (record) {
  for (const guard of results) recorded[guard.name] = Number(guard.ratio.toFixed(3));
  writeFileSync(recordedFile, `${JSON.stringify(recorded, null, 2)}\n`);
}
console.log(
  `guard: ${results.length} ratios, ${flagged} regressed by half or more, ${failedBenches} benchmarks did not finish`,
);
