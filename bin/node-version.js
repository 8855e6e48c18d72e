// Whether this Node can run Assay. Plain JavaScript that even an old Node parses: it runs before any of the
// TypeScript sources, which an old Node cannot load (ERR_UNKNOWN_FILE_EXTENSION). The range is package.json's
// "engines", so it is written down once.
import { readFileSync } from 'node:fs';
import satisfies from 'semver/functions/satisfies.js';

/** The Node versions Assay runs on, as package.json declares them. */
export function requiredNode() {
  return JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).engines.node;
}

/** One line saying which Node is needed, or undefined when `version` is one of them. */
export function nodeVersionProblem(version) {
  const range = requiredNode();
  // Nightly and release-candidate builds count as their version.
  if (satisfies(version, range, { includePrerelease: true })) return undefined;
  return 'assay needs Node ' + range + '; this is Node ' + version + ' (' + process.execPath + ')';
}
