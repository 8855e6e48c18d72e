// The values of one grid axis as a person types them, `0.1, 1e-3, "a, b", [1, 2]`: read the same way by the
// CLI's `--set PATH=…` and the web UI's sweep form.

/**
 * The values of one grid axis from comma-separated text. Each value is trimmed and read as JSON when it
 * parses (numbers, booleans, null, quoted strings, arrays, objects), else taken as the text itself. A comma
 * splits only outside `[…]`, `{…}` and double-quoted strings; inside a double-quoted string a backslash
 * escapes the next character as in JSON (`"a\"b"` is `a"b`), elsewhere it is an ordinary character, and so is
 * a closing bracket with no opening one. Throws an Error starting `empty value` when a value is empty
 * (`1,,2`, `1,`).
 *
 * @example parseSweepValues('0.1, adam, "a, b", [1, 2]') // [0.1, 'adam', 'a, b', [1, 2]]
 */
export function parseSweepValues(text: string): unknown[] {
  return splitSweepValues(text).map((item) => {
    if (item === '') throw new Error('empty value: remove the extra comma, or quote an empty string as ""');
    return parseSweepValue(item);
  });
}

/** One value: JSON when it parses as JSON, else the text itself (`adam`, `1e-3x`). */
function parseSweepValue(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** The trimmed values of a comma-separated list, split by the rules of {@link parseSweepValues}. */
function splitSweepValues(text: string): string[] {
  const items: string[] = [];
  let depth = 0;
  let quoted = false;
  let start = 0;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i];
    if (quoted) {
      if (c === '\\') i += 1;
      else if (c === '"') quoted = false;
    } else if (c === '"') quoted = true;
    else if (c === '[' || c === '{') depth += 1;
    else if ((c === ']' || c === '}') && depth > 0) depth -= 1;
    else if (c === ',' && depth === 0) {
      items.push(text.slice(start, i).trim());
      start = i + 1;
    }
  }
  items.push(text.slice(start).trim());
  return items;
}
