import { splitSnippet } from '../highlight.ts';

/** A search snippet with its matches in <mark>; everything else is rendered as text. */
export function Snippet({ text }: { text: string }) {
  return (
    <p className="snippet">
      {splitSnippet(text).map((part, i) => (part.marked ? <mark key={i}>{part.text}</mark> : part.text))}
    </p>
  );
}
