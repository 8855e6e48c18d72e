import { accessSync, constants } from 'node:fs';
import { delimiter, join, resolve } from 'node:path';

export type ToolName = 'temporal' | 'weed' | 'moto_server';

const overrideVariable: Record<ToolName, string> = {
  temporal: 'TEMPORAL_CLI_PATH',
  weed: 'WEED_PATH',
  moto_server: 'MOTO_SERVER_PATH',
};

const repoRoot = resolve(import.meta.dirname, '../..');
const venvBin = join(repoRoot, '.venv', 'bin');

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Absolute path of a test server binary: its override variable, then the repo's .venv/bin (installed by
 * scripts/setup-test-tools.sh), then PATH.
 */
export function resolveTool(name: ToolName): string {
  const variable = overrideVariable[name];
  const override = process.env[variable];
  if (override) {
    // An explicit setting that points nowhere is a mistake to report, not a reason to pick another binary.
    if (!isExecutable(override)) throw new Error(`${variable}=${override} is not an executable file`);
    return override;
  }
  const candidates = [venvBin, ...(process.env.PATH ?? '').split(delimiter).filter(Boolean)];
  for (const dir of candidates) {
    const path = join(dir, name);
    if (isExecutable(path)) return path;
  }
  throw new Error(
    `${name} not found in ${venvBin} or on PATH: run \`bash scripts/setup-test-tools.sh\` ` +
      `(or set ${variable} to the binary)`,
  );
}
