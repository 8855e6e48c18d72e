// What the sweep form's text boxes mean: grid axes one per line, or a JSON list of points.

/** A value as typed in an axis: JSON when it reads as JSON (numbers, booleans, null, quoted text), else text. */
function parseValue(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Splits on commas outside quotes and brackets, so `"a, b"` and `[1, 2]` stay one value. */
function splitValues(text: string): string[] {
  const values: string[] = [];
  let depth = 0;
  let quoted = false;
  let current = '';
  for (const ch of text) {
    if (ch === '"' && !current.endsWith('\\')) quoted = !quoted;
    else if (!quoted && (ch === '[' || ch === '{')) depth++;
    else if (!quoted && (ch === ']' || ch === '}')) depth--;
    if (ch === ',' && !quoted && depth === 0) {
      values.push(current.trim());
      current = '';
    } else current += ch;
  }
  values.push(current.trim());
  return values;
}

/**
 * Grid axes, one per line as `dotted.path: v1, v2, …`; blank lines and `#` comments are skipped. Throws an
 * Error naming the line when one has no path or no value.
 */
export function parseGridAxes(text: string): Record<string, unknown[]> {
  const grid: Record<string, unknown[]> = {};
  text.split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const colon = line.indexOf(':');
    const key = colon > 0 ? line.slice(0, colon).trim() : '';
    const values = colon > 0 ? splitValues(line.slice(colon + 1)).filter((v) => v !== '') : [];
    if (!key || values.length === 0) {
      throw new Error(`line ${i + 1}: write an axis as "path: value, value" (for example "lr: 0.1, 0.01")`);
    }
    if (key in grid) throw new Error(`line ${i + 1}: the axis "${key}" is given twice`);
    grid[key] = values.map(parseValue);
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
