// Which metric a page charts first: the sweep's objective when the run (or comparison) is a sweep's, else the
// first training key; `system/…` keys (what `assay run` samples of the machine) are never the default.

/** Keys `assay run` logs about the machine (CPU, memory, GPUs), charted apart from the training metrics. */
export const SYSTEM_PREFIX = 'system/';

export const isSystemKey = (key: string): boolean => key.startsWith(SYSTEM_PREFIX);

/** The key to chart first of `keys`: `objective` when logged, else the first non-system key, else the first. */
export function defaultMetricKey(keys: readonly string[], objective?: string | null): string | undefined {
  if (objective && keys.includes(objective)) return objective;
  return keys.find((k) => !isSystemKey(k)) ?? keys[0];
}

/** `keys` in the order to chart them: the default first, then the training keys, then the system keys. */
export function chartOrder<T>(
  items: readonly T[],
  keyOf: (item: T) => string,
  objective?: string | null,
): T[] {
  const first = defaultMetricKey(items.map(keyOf), objective);
  const rank = (item: T) => (keyOf(item) === first ? 0 : isSystemKey(keyOf(item)) ? 2 : 1);
  return [...items].sort((a, b) => rank(a) - rank(b));
}
