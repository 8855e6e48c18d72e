import type { ReactNode } from 'react';
import { Pager, type CursorPages } from './pager.tsx';
import { ErrorState, Loading } from './status.tsx';

/** What QueryView reads of a query: any of react-query's results (plain, infinite) has it. */
export interface QueryState<T> {
  isPending: boolean;
  isError: boolean;
  error: unknown;
  data: T | undefined;
  isPlaceholderData?: boolean;
}

export interface QueryViewProps<T> {
  query: QueryState<T>;
  /** What is loading, as the status line says it: "Loading {what}…". */
  what: string;
  /** The error state's title, above the server's code and message. */
  errorTitle: string;
  /** When the answer counts as empty, `empty` (an `<Empty>`, saying what to do next) is shown instead. */
  isEmpty?: (data: T) => boolean;
  empty?: ReactNode;
  /** Previous / Next under the list, shown in every state so that a reader can page back from an error. */
  pager?: { pages: CursorPages; nextCursor: string | null | undefined };
  /**
   * The answer; `stale` while it is the previous filter's or page's, kept on screen as the next one loads.
   */
  children: (data: T, stale: boolean) => ReactNode;
}

/**
 * The one scaffold of a page's read: loading, then the error, the empty state or the data, then the pager.
 */
export function QueryView<T>({
  query,
  what,
  errorTitle,
  isEmpty,
  empty,
  pager,
  children,
}: QueryViewProps<T>) {
  let body: ReactNode;
  if (query.isPending || (!query.isError && query.data === undefined)) body = <Loading what={what} />;
  else if (query.isError) body = <ErrorState error={query.error} title={errorTitle} />;
  else if (isEmpty?.(query.data as T)) body = empty;
  else body = children(query.data as T, query.isPlaceholderData ?? false);
  return (
    <>
      {body}
      {pager && <Pager pages={pager.pages} nextCursor={pager.nextCursor} />}
    </>
  );
}

/** A table's horizontal scroller; a `stale` table (the previous answer, while the next loads) is dimmed. */
export function TableScroll({ stale = false, children }: { stale?: boolean; children: ReactNode }) {
  return (
    <div className={stale ? 'table-scroll stale' : 'table-scroll'} aria-busy={stale || undefined}>
      {children}
    </div>
  );
}
