/** A piece of a search snippet: plain text, or a match the server wrapped in <mark></mark>. */
export interface SnippetPart {
  text: string;
  marked: boolean;
}

const MARKED = /<mark>([\s\S]*?)<\/mark>/g;

/**
 * The one place server text becomes markup: a search snippet split into its <mark> matches and the text
 * between them. Every other character, tags included, stays text for React to render as text; the server
 * does not escape the document's own text, so that text may hold anything.
 */
export function splitSnippet(snippet: string): SnippetPart[] {
  const parts: SnippetPart[] = [];
  const push = (text: string, marked: boolean) => {
    if (text) parts.push({ text, marked });
  };
  let last = 0;
  for (const match of snippet.matchAll(MARKED)) {
    push(snippet.slice(last, match.index), false);
    push(match[1]!, true);
    last = match.index + match[0].length;
  }
  push(snippet.slice(last), false);
  return parts;
}
