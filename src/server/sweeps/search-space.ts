import type { SearchSweepBody } from '@assay/contract';
import { AppError } from '../http/errors.ts';

// A searching sweep's declaration checked before anything is made: each refusal names its field.

const refuse = (field: string, message: string) =>
  new AppError(422, 'invalid_search_space', `${field}: ${message}`, { field });

const isMapping = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Each dimension's bounds and values, as the sampler can draw from them. */
function checkDistributions(space: SearchSweepBody['space']): void {
  const paths = Object.keys(space);
  if (paths.length === 0) throw refuse('space', 'give at least one dotted path to search');
  for (const [path, d] of Object.entries(space)) {
    const field = `space.${path}`;
    if (d.distribution === 'choice') {
      if (d.values.length === 0) throw refuse(`${field}.values`, 'a choice needs at least one value');
      continue;
    }
    if (!(d.low < d.high)) throw refuse(`${field}.low`, `low (${d.low}) must be below high (${d.high})`);
    if (d.distribution === 'log_uniform' && d.low <= 0)
      throw refuse(`${field}.low`, `a log_uniform low must be above 0, not ${d.low}`);
    if (d.distribution === 'int' && d.log && d.low < 1)
      throw refuse(`${field}.low`, `an int on a log scale needs low ≥ 1, not ${d.low}`);
  }
}

/**
 * Each path must name a key the base config has: a sweep searches settings the program reads, so a typo
 * would search nothing. The refusal says which part of the path is missing.
 */
function checkPaths(space: SearchSweepBody['space'], base: Record<string, unknown>): void {
  for (const path of Object.keys(space)) {
    const field = `space.${path}`;
    const segments = path.split('.');
    if (segments.some((s) => s === '') || segments.includes('__proto__'))
      throw refuse(field, 'write keys separated by single dots, such as optimizer.lr');
    let target: unknown = base;
    for (const [i, segment] of segments.entries()) {
      const parent = segments.slice(0, i).join('.') || 'the base config';
      if (!isMapping(target)) throw refuse(field, `${parent} is not a mapping, so it has no key ${segment}`);
      if (!Object.hasOwn(target, segment))
        throw refuse(
          field,
          i === 0 ? `base_yaml has no key ${segment}` : `${parent} exists but has no key ${segment}`,
        );
      target = target[segment];
    }
  }
}

/** The whole declaration: space, paths into the base, and what needs an objective. */
export function checkSearchSweep(body: SearchSweepBody, base: Record<string, unknown>): void {
  checkDistributions(body.space);
  checkPaths(body.space, base);
  if (!body.objective && body.early_stopping)
    throw refuse(
      'objective',
      'early stopping compares trials by the objective: give objective.metric and goal',
    );
  if (!body.objective && body.strategy === 'tpe')
    throw refuse('objective', 'tpe learns from the objective: give objective.metric and goal');
}
