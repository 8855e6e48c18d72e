import { useLayoutEffect, useRef, useState } from 'react';

/**
 * The first value seen with `key`, kept until the key changes: an array or object rebuilt on every render
 * (rows, a chart's lines) keeps its identity while its content, which `key` stands for, is the same, so memos
 * and effects that depend on it do not run again.
 */
export function useStableValue<T>(value: T, key: string): T {
  const [kept, setKept] = useState({ key, value });
  if (kept.key !== key) {
    // Storing what changed during render is React's pattern for it: this render is redone at once, with it.
    setKept({ key, value });
    return value;
  }
  return kept.value;
}

/**
 * A ref that holds the latest `value`, for callbacks made once (a chart's event handlers) and effects that
 * must not run again when it changes. It is updated after each render, before any effect runs.
 */
export function useLatest<T>(value: T) {
  const ref = useRef(value);
  useLayoutEffect(() => {
    ref.current = value;
  });
  return ref;
}
