/**
 * Paging of long lists. Pager pages a list the console holds whole;
 * CursorPager pages a list the API pages with `nextCursor`, keeping the
 * cursors of the pages before to go back.
 */
import { useCallback, useState } from 'preact/hooks';

/** The number of items a page shows when a list is held whole. */
export const PAGE_SIZE = 20;

export function Pager({ label, page, total, pageSize = PAGE_SIZE, onPage }: {
  label: string; page: number; total: number; pageSize?: number; onPage: (page: number) => void;
}) {
  const pages = Math.max(1, Math.ceil(total / pageSize));
  if (pages <= 1) return null;
  return (
    <nav class="pager" aria-label={label}>
      <button type="button" disabled={page <= 0} onClick={() => onPage(page - 1)}>Previous page</button>
      <span aria-live="polite">Page {page + 1} of {pages}</span>
      <button type="button" disabled={page >= pages - 1} onClick={() => onPage(page + 1)}>Next page</button>
    </nav>
  );
}

/** The part of `items` page `page` shows. */
export function pageOf<T>(items: readonly T[], page: number, pageSize = PAGE_SIZE): T[] {
  return items.slice(page * pageSize, (page + 1) * pageSize);
}

/** The cursor of the page shown and of those before it. */
export interface CursorPages {
  readonly cursor: string | undefined;
  readonly number: number;
  next: (cursor: string) => void;
  previous: () => void;
  reset: () => void;
}

export function useCursorPages(): CursorPages {
  const [stack, setStack] = useState<Array<string | undefined>>([undefined]);
  const next = useCallback((cursor: string) => setStack((before) => [...before, cursor]), []);
  const previous = useCallback(() => setStack((before) => (before.length > 1 ? before.slice(0, -1) : before)), []);
  const reset = useCallback(() => setStack([undefined]), []);
  return { cursor: stack[stack.length - 1], number: stack.length, next, previous, reset };
}

export function CursorPager({ label, pages, nextCursor }: { label: string; pages: CursorPages; nextCursor: string | null | undefined }) {
  if (pages.number === 1 && (nextCursor === null || nextCursor === undefined)) return null;
  return (
    <nav class="pager" aria-label={label}>
      <button type="button" disabled={pages.number <= 1} onClick={pages.previous}>Previous page</button>
      <span aria-live="polite">Page {pages.number}</span>
      <button type="button" disabled={nextCursor === null || nextCursor === undefined} onClick={() => nextCursor && pages.next(nextCursor)}>
        Next page
      </button>
    </nav>
  );
}
