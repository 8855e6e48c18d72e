// Whether this Node can run Assay. Plain JavaScript that even an old Node parses: it runs before any of the
// TypeScript sources, which an old Node cannot load (ERR_UNKNOWN_FILE_EXTENSION). The range is package.json's
// "engines", so it is written down once.
import { readFileSync } from 'node:fs';

/** The Node versions Assay runs on, as package.json declares them. */
export function requiredNode() {
  return JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).engines.node;
}

/** One line saying which Node is needed, or undefined when `version` is one of them. */
export function nodeVersionProblem(version) {
  const range = requiredNode();
  if (satisfiesRange(version, range)) return undefined;
  return 'assay needs Node ' + range + '; this is Node ' + version + ' (' + process.execPath + ')';
}

/**
 * Whether `version` is in `range`, for the part of npm's range syntax an engines field needs: sets joined
 * by `||`, each a list of comparators (`^1.2.3`, `>=1.2.3`, `>1.2.3`, `<=1.2.3`, `<1.2.3`, `=1.2.3`,
 * `1.2.3`). Any other form throws, so a new engines range outside it fails test/cli/node-version.test.ts
 * rather than passing quietly. Nightly and release-candidate builds count as their version. Written here
 * instead of loading semver: every `assay` start checks it, once per managed run, and semver's regular
 * expressions cost ~25 ms of CPU.
 */
export function satisfiesRange(version, range) {
  const have = numbers(version.replace(/[-+].*$/, ''), version);
  // Every comparator is read before any is tested, so an unsupported one throws whatever the version.
  const sets = range.split('||').map((set) =>
    set
      .trim()
      .split(/\s+/)
      .map((comparator) => {
        // `^0.y.z` means something else again (below 0.(y+1)): Node has no such versions, so it is refused.
        const match = /^(\^(?!0\.)|>=|>|<=|<|=)?(\d+\.\d+\.\d+)$/.exec(comparator);
        if (!match) throw new Error('unsupported Node version range in package.json engines: ' + range);
        return { operator: match[1] ?? '=', want: numbers(match[2], range) };
      }),
  );
  return sets.some((set) =>
    set.every(({ operator, want }) => {
      const order = compare(have, want);
      switch (operator) {
        case '^':
          return order >= 0 && have[0] === want[0];
        case '>=':
          return order >= 0;
        case '>':
          return order > 0;
        case '<=':
          return order <= 0;
        case '<':
          return order < 0;
        default:
          return order === 0;
      }
    }),
  );
}

function numbers(text, source) {
  const parts = text.split('.').map(Number);
  if (parts.length !== 3 || parts.some((n) => !Number.isInteger(n)))
    throw new Error('not a version: ' + source);
  return parts;
}

function compare(a, b) {
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i] < b[i] ? -1 : 1;
  return 0;
}
