import type { GridSweepBody, ListSweepBody } from '@assay/contract';
import { stringify } from 'yaml';
import { badRequest } from '../http/errors.ts';

/**
 * One point of a sweep: the overrides in the order given, each a dotted path into the base config and
 * its value.
 */
export type SweepPoint = [path: string, value: unknown][];

export const MAX_SWEEP_POINTS = 1000;
const MAX_PATHS = 100;
const MAX_NAME = 200;

const invalid = (message: string, details?: unknown) => badRequest('invalid_sweep', message, details);
const tooLarge = (points: number) =>
  badRequest(
    'sweep_too_large',
    `a sweep makes at most ${MAX_SWEEP_POINTS} variations; this one would make ${points}`,
    { points, max: MAX_SWEEP_POINTS },
  );

/**
 * A request written before `strategy` existed, tagged: `grid` when it has `grid`, `list` when it has `list`.
 * Anything else is left for the schema to refuse.
 */
export function tagLegacySweep(body: unknown): unknown {
  if (typeof body !== 'object' || body === null || Array.isArray(body) || 'strategy' in body) return body;
  const [grid, list] = ['grid', 'list'].map((k) => (body as Record<string, unknown>)[k] !== undefined);
  // A key no sweep takes is the schema's to name (422), as it was before `strategy` existed.
  if (grid === list && Object.keys(body).some((k) => !LEGACY_KEYS.has(k))) return body;
  if (grid === list)
    throw invalid('give `strategy` (grid or list) with its field, or exactly one of grid and list');
  return { ...body, strategy: grid ? 'grid' : 'list' };
}

const LEGACY_KEYS = new Set(['base_yaml', 'grid', 'list', 'concurrency', 'name_prefix']);

/** A sweep whose points are all known at its creation. */
export type EnumeratedSweep = GridSweepBody | ListSweepBody;

/** The sweep's points, checked: no empty value list, at most MAX_SWEEP_POINTS. */
export function sweepPoints(spec: EnumeratedSweep): SweepPoint[] {
  return spec.strategy === 'grid' ? gridPoints(spec) : listPoints(spec);
}

function listPoints({ list }: ListSweepBody): SweepPoint[] {
  if (list.length === 0) throw invalid('list needs at least one point');
  if (list.length > MAX_SWEEP_POINTS) throw tooLarge(list.length);
  return list.map((point) => {
    const entries = Object.entries(point);
    if (entries.length > MAX_PATHS) throw invalid(`a point sets at most ${MAX_PATHS} paths`);
    entries.forEach(([path]) => checkPath(path));
    return entries;
  });
}

function gridPoints({ grid }: GridSweepBody): SweepPoint[] {
  const axes = Object.entries(grid);
  if (axes.length === 0) throw invalid('grid needs at least one path');
  if (axes.length > MAX_PATHS) throw invalid(`a grid varies at most ${MAX_PATHS} paths`);
  let total = 1;
  for (const [path, values] of axes) {
    checkPath(path);
    if (values.length === 0)
      throw invalid(`grid path ${JSON.stringify(path)} needs at least one value`, { path });
    total *= values.length;
  }
  if (total > MAX_SWEEP_POINTS) throw tooLarge(total);
  // The first path varies slowest, as nested loops in key order would.
  let points: SweepPoint[] = [[]];
  for (const [path, values] of axes)
    points = points.flatMap((point) => values.map((value): SweepPoint => [...point, [path, value]]));
  return points;
}

function checkPath(path: string): void {
  const segments = path.split('.');
  if (segments.some((s) => s === ''))
    throw invalid(
      `path ${JSON.stringify(path)} has an empty segment; write keys separated by single dots, such as optimizer.lr`,
      { path },
    );
  // Assigning `__proto__` would change an object's prototype instead of adding a key.
  if (segments.includes('__proto__'))
    throw invalid(`path ${JSON.stringify(path)} uses the reserved key __proto__`, { path });
}

const isMapping = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** The base config with the point's overrides set (missing mappings on the way are created), as YAML. */
export function pointYaml(base: Record<string, unknown>, point: SweepPoint): string {
  const config = structuredClone(base);
  for (const [path, value] of point) {
    const segments = path.split('.');
    let target = config;
    for (const [i, segment] of segments.slice(0, -1).entries()) {
      const next = Object.hasOwn(target, segment) ? target[segment] : (target[segment] = {});
      if (!isMapping(next)) {
        throw invalid(
          `path ${JSON.stringify(path)}: ${segments.slice(0, i + 1).join('.')} is not a mapping, so it has no key ${JSON.stringify(segments[i + 1])}`,
          { path },
        );
      }
      target = next;
    }
    target[segments.at(-1)!] = value;
  }
  return stringify(config);
}

/** `<prefix> k1=v1 k2=v2`, values JSON-encoded unless strings, cut to a variation name's length. */
export function pointName(prefix: string, point: SweepPoint): string {
  const name = [
    prefix,
    ...point.map(([path, value]) => `${path}=${typeof value === 'string' ? value : JSON.stringify(value)}`),
  ].join(' ');
  // Cut by code points, so a surrogate pair is never split into text the database cannot store.
  const chars = [...name];
  return chars.length <= MAX_NAME ? name : `${chars.slice(0, MAX_NAME - 1).join('')}…`;
}
