// The package's version, read from its package.json at run time: the same file whether `assay` runs from the
// sources, the built dist/ of an installed package, or the runner's bundle (dist/runner/).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The version in the nearest package.json named `assay` above this module; `unknown` if there is none. */
export function packageVersion(from: string = import.meta.url): string {
  let dir = path.dirname(fileURLToPath(from));
  for (;;) {
    const version = versionIn(path.join(dir, 'package.json'));
    if (version !== undefined) return version;
    const up = path.dirname(dir);
    if (up === dir) return 'unknown';
    dir = up;
  }
}

// The workspaces' own package.json files (src/client, src/contract) name other packages: passed over.
function versionIn(file: string): string | undefined {
  try {
    const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: unknown; version?: unknown };
    return pkg.name === 'assay' && typeof pkg.version === 'string' ? pkg.version : undefined;
  } catch {
    return undefined;
  }
}
