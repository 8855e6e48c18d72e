/**
 * Builds a request path with every interpolated value percent-encoded: the one way ids enter URLs, so an id
 * can never add a segment or a query string. Usage: path`/experiments/${id}/variations/${n}`.
 */
export function path(strings: TemplateStringsArray, ...values: Array<string | number>): string {
  return strings.reduce(
    (out, part, i) => out + part + (i < values.length ? encodeURIComponent(String(values[i])) : ''),
    '',
  );
}

/** A query string from the defined values only; arrays repeat the key. */
export function query(params: Record<string, string | number | boolean | undefined | null>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params))
    if (value !== undefined && value !== null) search.append(key, String(value));
  const text = search.toString();
  return text ? `?${text}` : '';
}
