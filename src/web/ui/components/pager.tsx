import { useState } from 'react';

/**
 * Cursor paging as the list endpoints answer it. The API pages forwards only, so the cursors of the pages
 * seen are kept for Previous; a changed filter starts again at the first page.
 */
export function useCursorPages() {
  const [cursors, setCursors] = useState<Array<string | undefined>>([undefined]);
  return {
    cursor: cursors[cursors.length - 1],
    page: cursors.length,
    reset: () => setCursors([undefined]),
    back: () => setCursors((c) => c.slice(0, -1)),
    forward: (next: string) => setCursors((c) => [...c, next]),
  };
}

export type CursorPages = ReturnType<typeof useCursorPages>;

/** Previous / Next under a list; Next is off when the answer had no next cursor. */
export function Pager({ pages, nextCursor }: { pages: CursorPages; nextCursor: string | null | undefined }) {
  return (
    <PageNav
      label={`Page ${pages.page}`}
      onPrevious={pages.page < 2 ? undefined : pages.back}
      onNext={nextCursor ? () => pages.forward(nextCursor) : undefined}
    />
  );
}

/** Previous / Next around what the page shows; a button without its handler is off. */
export function PageNav({
  label,
  onPrevious,
  onNext,
}: {
  label: string;
  onPrevious: (() => void) | undefined;
  onNext: (() => void) | undefined;
}) {
  return (
    <nav className="pager" aria-label="Pages">
      <button type="button" disabled={!onPrevious} onClick={onPrevious}>
        Previous page
      </button>
      <span>{label}</span>
      <button type="button" disabled={!onNext} onClick={onNext}>
        Next page
      </button>
    </nav>
  );
}
