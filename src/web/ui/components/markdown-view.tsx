import type { ReactNode } from 'react';
import { parseMarkdown, type Block, type Inline } from '../markdown.ts';

/** Markdown notes as React elements: text stays text (a tag in the notes shows as written), links http(s) only. */
export function MarkdownView({ source }: { source: string }) {
  return <>{parseMarkdown(source).map((block, i) => renderBlock(block, i))}</>;
}

function renderBlock(block: Block, key: number): ReactNode {
  switch (block.type) {
    case 'heading': {
      // Notes sit under the page's own headings: theirs start a level below.
      const Tag = `h${Math.min(block.level + 2, 6)}` as 'h3';
      return <Tag key={key}>{renderInlines(block.children)}</Tag>;
    }
    case 'paragraph':
      return <p key={key}>{renderInlines(block.children)}</p>;
    case 'list': {
      const items = block.items.map((item, i) => <li key={i}>{renderInlines(item)}</li>);
      return block.ordered ? (
        <ol key={key} start={block.start}>
          {items}
        </ol>
      ) : (
        <ul key={key}>{items}</ul>
      );
    }
    case 'code':
      return (
        <pre key={key}>
          <code>{block.text}</code>
        </pre>
      );
    case 'quote':
      return <blockquote key={key}>{block.children.map((b, i) => renderBlock(b, i))}</blockquote>;
    case 'rule':
      return <hr key={key} />;
  }
}

function renderInlines(inlines: Inline[]): ReactNode[] {
  return inlines.map((inline, i) => {
    switch (inline.type) {
      case 'text':
        return inline.text;
      case 'code':
        return <code key={i}>{inline.text}</code>;
      case 'strong':
        return <strong key={i}>{renderInlines(inline.children)}</strong>;
      case 'em':
        return <em key={i}>{renderInlines(inline.children)}</em>;
      case 'link':
        return inline.href ? (
          <a key={i} href={inline.href} target="_blank" rel="noopener noreferrer nofollow">
            {renderInlines(inline.children)}
          </a>
        ) : (
          <span key={i}>{renderInlines(inline.children)}</span>
        );
    }
  });
}
