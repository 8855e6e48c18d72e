// A run's notes: the small part of Markdown notes use (headings, paragraphs, lists, quotes, code, emphasis,
// links) parsed into plain data that the page renders as React elements. There is no raw HTML: a tag in the
// notes is text, and a link keeps its href only when it is http or https.

export type Inline =
  | { type: 'text'; text: string }
  | { type: 'code'; text: string }
  | { type: 'strong'; children: Inline[] }
  | { type: 'em'; children: Inline[] }
  /** `href` null: the link's target was not http(s); its text shows, unlinked. */
  | { type: 'link'; href: string | null; children: Inline[] };

export type Block =
  | { type: 'heading'; level: 1 | 2 | 3 | 4 | 5 | 6; children: Inline[] }
  | { type: 'paragraph'; children: Inline[] }
  | { type: 'list'; ordered: boolean; start: number; items: Inline[][] }
  | { type: 'code'; text: string }
  | { type: 'quote'; children: Block[] }
  | { type: 'rule' };

/** The href of a link when it is an absolute http or https URL, else null. */
export function safeHref(raw: string): string | null {
  try {
    const url = new URL(raw.trim());
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : null;
  } catch {
    return null;
  }
}

const HEADING = /^(#{1,6})\s+(.*?)\s*#*\s*$/;
const BULLET = /^\s{0,3}[-*+]\s+(.*)$/;
const NUMBERED = /^\s{0,3}(\d{1,9})[.)]\s+(.*)$/;
const FENCE = /^\s{0,3}(```|~~~)/;
const RULE = /^\s{0,3}([-*_])(\s*\1){2,}\s*$/;
const QUOTE = /^\s{0,3}>\s?(.*)$/;

/** Markdown text as blocks. */
export function parseMarkdown(source: string): Block[] {
  const lines = source.replace(/\r\n?/g, '\n').split('\n');
  const blocks: Block[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i]!;
    if (line.trim() === '') {
      i++;
      continue;
    }
    const fence = FENCE.exec(line);
    if (fence) {
      const body: string[] = [];
      i++;
      while (i < lines.length && !lines[i]!.trimStart().startsWith(fence[1]!)) body.push(lines[i++]!);
      i++;
      blocks.push({ type: 'code', text: body.join('\n') });
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      blocks.push({
        type: 'heading',
        level: heading[1]!.length as 1 | 2 | 3 | 4 | 5 | 6,
        children: parseInline(heading[2]!),
      });
      i++;
      continue;
    }
    if (RULE.test(line)) {
      blocks.push({ type: 'rule' });
      i++;
      continue;
    }
    if (QUOTE.test(line)) {
      const body: string[] = [];
      while (i < lines.length && QUOTE.test(lines[i]!)) body.push(QUOTE.exec(lines[i++]!)![1]!);
      blocks.push({ type: 'quote', children: parseMarkdown(body.join('\n')) });
      continue;
    }
    const bullet = BULLET.exec(line);
    const numbered = NUMBERED.exec(line);
    if (bullet || numbered) {
      const pattern = bullet ? BULLET : NUMBERED;
      const items: string[] = [];
      while (i < lines.length && lines[i]!.trim() !== '') {
        const item = pattern.exec(lines[i]!);
        if (item) items.push(item[item.length - 1]!);
        // A line that is not an item continues the one before (a wrapped item).
        else if (items.length > 0 && !startsBlock(lines[i]!))
          items[items.length - 1] += ` ${lines[i]!.trim()}`;
        else break;
        i++;
      }
      blocks.push({
        type: 'list',
        ordered: !bullet,
        start: numbered && !bullet ? Number(numbered[1]) : 1,
        items: items.map(parseInline),
      });
      continue;
    }
    const body: string[] = [];
    while (i < lines.length && lines[i]!.trim() !== '' && (body.length === 0 || !startsBlock(lines[i]!)))
      body.push(lines[i++]!.trim());
    blocks.push({ type: 'paragraph', children: parseInline(body.join('\n')) });
  }
  return blocks;
}

function startsBlock(line: string): boolean {
  return [HEADING, BULLET, NUMBERED, FENCE, RULE, QUOTE].some((p) => p.test(line));
}

const BARE_URL = /^https?:\/\/[^\s<>()]+[^\s<>().,;:!?'"]/;

/** A paragraph's text as inline pieces: code spans, strong, emphasis, links; everything else text. */
export function parseInline(text: string): Inline[] {
  const out: Inline[] = [];
  let plain = '';
  const flush = () => {
    if (plain) out.push({ type: 'text', text: plain });
    plain = '';
  };
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '\\' && i + 1 < text.length && /[!-/:-@[-`{-~]/.test(text[i + 1]!)) {
      plain += text[i + 1];
      i += 2;
      continue;
    }
    if (c === '`') {
      const run = /^`+/.exec(text.slice(i))![0];
      const close = text.indexOf(run, i + run.length);
      if (close !== -1) {
        flush();
        out.push({ type: 'code', text: text.slice(i + run.length, close).trim() || ' ' });
        i = close + run.length;
        continue;
      }
    }
    if ((c === '*' || c === '_') && text[i + 1] === c) {
      const close = text.indexOf(c + c, i + 2);
      if (close > i + 2) {
        flush();
        out.push({ type: 'strong', children: parseInline(text.slice(i + 2, close)) });
        i = close + 2;
        continue;
      }
    }
    if (c === '*' || (c === '_' && !/\w/.test(text[i - 1] ?? ''))) {
      const close = findEmphasisClose(text, i + 1, c);
      if (close !== -1) {
        flush();
        out.push({ type: 'em', children: parseInline(text.slice(i + 1, close)) });
        i = close + 1;
        continue;
      }
    }
    if (c === '[') {
      // The target may hold one level of balanced parentheses (a Wikipedia URL, or `alert(1)`).
      const link = /^\[([^\]]*)\]\(\s*<?((?:[^()\s<>]|\([^()\s<>]*\))*)>?(?:\s+"[^"]*")?\s*\)/.exec(
        text.slice(i),
      );
      if (link) {
        flush();
        out.push({ type: 'link', href: safeHref(link[2]!), children: parseInline(link[1]!) });
        i += link[0].length;
        continue;
      }
    }
    if (c === '<') {
      const auto = /^<(https?:\/\/[^\s<>]+)>/.exec(text.slice(i));
      if (auto) {
        flush();
        out.push({ type: 'link', href: safeHref(auto[1]!), children: [{ type: 'text', text: auto[1]! }] });
        i += auto[0].length;
        continue;
      }
    }
    if ((c === 'h' || c === 'H') && !/\w/.test(text[i - 1] ?? '')) {
      const bare = BARE_URL.exec(text.slice(i));
      if (bare) {
        flush();
        out.push({ type: 'link', href: safeHref(bare[0]), children: [{ type: 'text', text: bare[0] }] });
        i += bare[0].length;
        continue;
      }
    }
    plain += c;
    i++;
  }
  flush();
  return out;
}

/** The closing emphasis marker: the next single `marker` not doubled, with text before it. */
function findEmphasisClose(text: string, from: number, marker: string): number {
  if (from >= text.length || /\s/.test(text[from]!)) return -1;
  for (let j = from + 1; j < text.length; j++) {
    if (text[j] === '\\') {
      j++;
      continue;
    }
    if (text[j] !== marker) continue;
    if (text[j + 1] === marker) {
      j++;
      continue;
    }
    if (/\s/.test(text[j - 1]!)) continue;
    if (marker === '_' && /\w/.test(text[j + 1] ?? '')) continue;
    return j;
  }
  return -1;
}
