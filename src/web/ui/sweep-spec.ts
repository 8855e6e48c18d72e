// What the sweep form's text boxes mean: grid axes one per line, or a JSON list of points.
import { parseSweepValues } from '@assay/client/browser';
import type { SearchSpace } from '@assay/contract';

/**
 * Grid axes, one per line as `dotted.path: v1, v2, …` (values read by `parseSweepValues`, as the CLI's
 * `--set` does); blank lines and `#` comments are skipped. Throws an Error naming the line when one has no
 * path, no value or an empty one.
 */
export function parseGridAxes(text: string): Record<string, unknown[]> {
  const grid: Record<string, unknown[]> = {};
  text.split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const colon = line.indexOf(':');
    const key = colon > 0 ? line.slice(0, colon).trim() : '';
    const values = colon > 0 ? line.slice(colon + 1).trim() : '';
    if (!key || values === '') {
      throw new Error(`line ${i + 1}: write an axis as "path: value, value" (for example "lr: 0.1, 0.01")`);
    }
    if (key in grid) throw new Error(`line ${i + 1}: the axis "${key}" is given twice`);
    try {
      grid[key] = parseSweepValues(values);
    } catch (error) {
      throw new Error(`line ${i + 1}: ${(error as Error).message}`, { cause: error });
    }
  });
  if (Object.keys(grid).length === 0) throw new Error('give at least one axis, for example "lr: 0.1, 0.01"');
  return grid;
}

/** A list of points: a JSON array of objects of dotted path → value. Throws an Error saying what is wrong. */
export function parsePointList(text: string): Array<Record<string, unknown>> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new Error(`the list is not JSON: ${(error as Error).message}`, { cause: error });
  }
  const isPoint = (p: unknown) => typeof p === 'object' && p !== null && !Array.isArray(p);
  if (!Array.isArray(parsed) || parsed.length === 0 || !parsed.every(isPoint)) {
    throw new Error('write the list as a JSON array of objects, for example [{"lr": 0.1}, {"lr": 0.01}]');
  }
  return parsed as Array<Record<string, unknown>>;
}

/**
 * A search space written as YAML (`lr: {distribution: log_uniform, low: 1e-5, high: 1}`, one key per
 * dotted path). The YAML library is loaded here, on the first search sweep submitted, not with the app.
 * Checks only the shape (a mapping of mappings, each with a `distribution`); the service checks the rest
 * and names the field it refuses.
 */
export async function parseSpace(text: string): Promise<SearchSpace> {
  const { parse } = await import('yaml');
  let parsed: unknown;
  try {
    parsed = parse(text);
  } catch (error) {
    throw new Error(`the space is not YAML: ${(error as Error).message}`, { cause: error });
  }
  const isMapping = (v: unknown): v is Record<string, unknown> =>
    typeof v === 'object' && v !== null && !Array.isArray(v);
  if (!isMapping(parsed) || Object.keys(parsed).length === 0)
    throw new Error(
      'write the space as one key per dotted path, for example "lr: {distribution: uniform, low: 0, high: 1}"',
    );
  for (const [key, value] of Object.entries(parsed)) {
    if (!isMapping(value) || typeof value.distribution !== 'string')
      throw new Error(
        `space.${key}: give a mapping with a distribution (uniform, log_uniform, int or choice)`,
      );
  }
  return parsed as SearchSpace;
}
