// A console line's ANSI escapes as text styles. A program's colours (SGR: ESC [ … m) become a style per run of
// text; every other escape (cursor moves, erase, titles, hyperlinks) and control character is dropped. The
// result is plain data: the log pane renders it as React text with a class or a style, never as markup.

/** A colour: one of the 256 of the xterm palette (0–15 the named ones), or a 24-bit one. */
export type AnsiColor = { index: number } | { rgb: [number, number, number] };

/** The text style in force: what SGR codes set and reset. */
export interface AnsiStyle {
  fg?: AnsiColor;
  bg?: AnsiColor;
  bold?: boolean;
  dim?: boolean;
  italic?: boolean;
  underline?: boolean;
  inverse?: boolean;
}

/** A run of text in one style. */
export interface AnsiSegment {
  text: string;
  style: AnsiStyle;
}

export const PLAIN: AnsiStyle = Object.freeze({});

// CSI: ESC [ parameters intermediates final (ECMA-48). OSC: ESC ] … ended by BEL or ESC \. DCS, SOS, PM and
// APC strings end the same way. Any other ESC takes one more character (ESC 7, ESC (B, …).
const ESCAPE =
  /\x1b\[([0-?]*)([ -/]*)([@-~])|\x1b[\]PX^_][\s\S]*?(?:\x07|\x1b\\|$)|\x1b[ -/]*[0-~]?|\x9b[0-?]*[ -/]*[@-~]/g;
// C0 controls other than tab, DEL, and the C1 range: nothing a page should show.
const CONTROL = /[\x00-\x08\x0a-\x1f\x7f-\x9f]/g;

/**
 * A line's text as styled segments, starting from `initial` (the style the previous line of the same
 * stream left in force); `state` is the style in force at its end. A carriage return shows what a terminal
 * ends up showing most often, a progress bar redrawn in place: the text after the last one that has text
 * after it.
 */
export function parseAnsi(
  input: string,
  initial: AnsiStyle = PLAIN,
): { segments: AnsiSegment[]; state: AnsiStyle } {
  const segments: AnsiSegment[] = [];
  let style = initial;
  let at = 0;
  const push = (raw: string) => {
    const parts = raw.split('\r');
    // What a carriage return leaves: the text after it overwrites the line.
    if (parts.length > 1) segments.length = 0;
    const text = parts[parts.length - 1]!.replace(CONTROL, '');
    if (text === '') return;
    const last = segments[segments.length - 1];
    if (last && last.style === style) last.text += text;
    else segments.push({ text, style });
  };
  // A line ending in `\r` (a progress bar's last redraw) shows what came before it.
  const line = input.replace(/\r+$/, '');
  for (const match of line.matchAll(ESCAPE)) {
    push(line.slice(at, match.index));
    at = match.index + match[0].length;
    // Only an SGR (final `m`, no intermediates, no private-mode marker) styles text.
    if (match[3] === 'm' && match[2] === '' && !/^[<=>?]/.test(match[1]!)) style = applySgr(style, match[1]!);
  }
  push(line.slice(at));
  return { segments, state: style };
}

/** The style after one SGR's parameters (`1;31`, `38;5;208`, `` for a reset). */
export function applySgr(current: AnsiStyle, params: string): AnsiStyle {
  const codes = params === '' ? [0] : params.split(/[;:]/).map((p) => (p === '' ? 0 : Number(p)));
  let style: AnsiStyle = { ...current };
  for (let i = 0; i < codes.length; i++) {
    const code = codes[i]!;
    if (code === 0) style = {};
    else if (code === 1) style.bold = true;
    else if (code === 2) style.dim = true;
    else if (code === 3) style.italic = true;
    else if (code === 4) style.underline = true;
    else if (code === 7) style.inverse = true;
    else if (code === 22) {
      delete style.bold;
      delete style.dim;
    } else if (code === 23) delete style.italic;
    else if (code === 24) delete style.underline;
    else if (code === 27) delete style.inverse;
    else if (code >= 30 && code <= 37) style.fg = { index: code - 30 };
    else if (code >= 90 && code <= 97) style.fg = { index: code - 90 + 8 };
    else if (code === 39) delete style.fg;
    else if (code >= 40 && code <= 47) style.bg = { index: code - 40 };
    else if (code >= 100 && code <= 107) style.bg = { index: code - 100 + 8 };
    else if (code === 49) delete style.bg;
    else if (code === 38 || code === 48) {
      const [color, used] = extendedColor(codes, i + 1);
      i += used;
      if (color) style[code === 38 ? 'fg' : 'bg'] = color;
    }
  }
  return style;
}

/** `5;n` or `2;r;g;b` at `codes[at]`: the colour, and how many codes it took. */
function extendedColor(codes: number[], at: number): [AnsiColor | undefined, number] {
  const byte = (n: number | undefined) => n !== undefined && Number.isInteger(n) && n >= 0 && n <= 255;
  if (codes[at] === 5) return [byte(codes[at + 1]) ? { index: codes[at + 1]! } : undefined, 2];
  if (codes[at] === 2) {
    const [r, g, b] = [codes[at + 1], codes[at + 2], codes[at + 3]];
    return [byte(r) && byte(g) && byte(b) ? { rgb: [r!, g!, b!] } : undefined, 4];
  }
  return [undefined, codes.length - at];
}

// The xterm palette's 16 named colours as the pane shows them on a light background.
const NAMED = [
  '#1b1f24',
  '#c0262d',
  '#1a7f37',
  '#9a6700',
  '#1f5fbf',
  '#8b3fbf',
  '#117a8b',
  '#6e7781',
  '#57606a',
  '#e5534b',
  '#2da44e',
  '#bf8700',
  '#4c8eda',
  '#b07ee0',
  '#27a3b8',
  '#8c959f',
];

/** A colour as CSS: the palette's named 16, its 6×6×6 cube and grey ramp, or the 24-bit value. */
export function cssColor(color: AnsiColor): string {
  if ('rgb' in color) return `rgb(${color.rgb.join(', ')})`;
  const n = color.index;
  if (n < 16) return NAMED[n]!;
  if (n >= 232) {
    const level = 8 + (n - 232) * 10;
    return `rgb(${level}, ${level}, ${level})`;
  }
  const cube = n - 16;
  const level = (v: number) => (v === 0 ? 0 : 55 + v * 40);
  return `rgb(${level(Math.floor(cube / 36))}, ${level(Math.floor(cube / 6) % 6)}, ${level(cube % 6)})`;
}

/** Plain text of a line: its escapes and control characters removed (what search matches against). */
export function plainText(segments: AnsiSegment[]): string {
  return segments.map((s) => s.text).join('');
}
