// A sweep's values as text: the points its trials tried and the objective values they reached.
import { formatMetric } from './metric-series.ts';

/** How a choice's value is named: strings as they are, the rest as JSON. */
export const categoryName = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));

/** A param or objective value: numbers as the charts show them, the rest by name; '—' when absent. */
export const formatValue = (v: unknown) =>
  v === undefined || v === null ? '—' : typeof v === 'number' ? formatMetric(v) : categoryName(v);
