// Where a server's CPU time went, from a V8 .cpuprofile (node --cpu-prof): self time by area and by function.
// Run: node bench/runner-traffic/profile-summary.ts bench/results/profiles/assay-100-runners.cpuprofile [top]
import { readFile } from 'node:fs/promises';
import path from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

const repoRoot = path.resolve(import.meta.dirname, '../..');

/** A coarse owner of a frame: a package, a folder of ours, Node's internals, or V8's pseudo-frames. */
function areaOf(url: string, fn: string): string {
  if (!url) return fn.startsWith('(') ? fn : '(native)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1]!;
  if (url.startsWith('node:')) return `node:${url.slice(5).split('/')[0]}`;
  const file = url.replace(/^file:\/\//, '');
  if (file.startsWith(repoRoot)) return path.dirname(path.relative(repoRoot, file));
  return url;
}

const { argv } = process;
const file = argv[2];
if (!file) throw new Error('usage: node bench/runner-traffic/profile-summary.ts <file.cpuprofile> [top]');
const top = Number(argv[3] ?? 25);
const profile = JSON.parse(await readFile(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
// Self time per node from the samples and their time deltas (µs),
// which is exact where hitCount × interval is not.
const selfUs = new Map<number, number>();
profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
const total = [...selfUs.values()].reduce((a, b) => a + b, 0);
const areas = new Map<string, number>();
const functions = new Map<string, number>();
for (const [id, us] of selfUs) {
  const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
  const area = areaOf(url, functionName);
  areas.set(area, (areas.get(area) ?? 0) + us);
  const name =
    `${functionName || '(anonymous)'} ${url ? `${url.replace(`file://${repoRoot}/`, '')}:${lineNumber + 1}` : ''}`.trim();
  functions.set(name, (functions.get(name) ?? 0) + us);
}
const pct = (us: number) => `${((100 * us) / total).toFixed(1).padStart(5)} %`;
const busy = total - (areas.get('(idle)') ?? 0);
console.log(
  `${(total / 1e6).toFixed(1)} s profiled, ${(busy / 1e6).toFixed(1)} s busy (${pct(busy)})\n\nself time by area:`,
);
for (const [area, us] of [...areas].sort((a, b) => b[1] - a[1]).slice(0, top))
  console.log(`${pct(us)}  ${area}`);
console.log('\nself time by function:');
for (const [name, us] of [...functions].sort((a, b) => b[1] - a[1]).slice(0, top))
  console.log(`${pct(us)}  ${name}`);
