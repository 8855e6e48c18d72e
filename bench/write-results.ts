// Assembles bench/results.md from the blocks each benchmark wrote to bench/results/<name>.md in its last run.
// `node bench/write-results.ts` after running the benchmarks (bench/README.md lists them).
import { readdir, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

const dir = path.join(import.meta.dirname, 'results');
const order = [
  'runner-traffic',
  'metrics',
  'run-logs',
  'run-logs-500',
  'run-logs-200',
  'python-sdk',
  'managed-runs',
  'sweeps',
  'sweeps-sdk',
  'cancel-latency',
  'search',
  'uploads',
  'web-render',
];
const files = (await readdir(dir)).filter((f) => f.endsWith('.md'));
files.sort((a, b) => (order.indexOf(a.slice(0, -3)) + 1 || 99) - (order.indexOf(b.slice(0, -3)) + 1 || 99));
const blocks = await Promise.all(files.map((f) => readFile(path.join(dir, f), 'utf8')));
const header = [
  '# Benchmark results',
  '',
  `Assembled ${new Date().toISOString().slice(0, 10)} by \`node bench/write-results.ts\` from the last run of each benchmark`,
  `(machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'unknown CPU'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, ${os.platform()} ${os.release()}).`,
  'Each block names its own command, date and machine; every ratio is measured within one run.',
  '',
].join('\n');
await writeFile(
  path.join(import.meta.dirname, 'results.md'),
  `${header}\n${blocks.map((b) => b.trim()).join('\n\n')}\n`,
);
process.stdout.write(`bench/results.md: ${files.join(', ')}\n`);
