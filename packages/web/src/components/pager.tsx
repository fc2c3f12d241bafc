import type { ReactNode } from 'react';
import type { PagedState } from '../lib/query';
import { Button } from './buttons';

/** Under a list that pages (lib/query.ts usePagedQuery): how many of how many are shown, and the next page. */
export function LoadMore<T>({ query, noun }: { query: PagedState<T>; noun: string }) {
  if (!query.data) return null;
  return (
    <p className="pager">
      <span role="status" aria-live="polite">
        {query.data.items.length} of {query.data.total} {noun}
      </span>
      {query.hasMore ? (
        <Button small busy={query.loadingMore} onClick={query.loadMore}>
          {query.loadingMore ? 'Loading…' : 'Load more'}
        </Button>
      ) : null}
    </p>
  );
}

/** Previous / Next under a list paged in the page itself, with what the current page shows between them. */
export function PageNav({
  label,
  current,
  pages,
  onPage,
  children,
}: {
  label: string;
  current: number;
  pages: number;
  onPage: (page: number) => void;
  children: ReactNode;
}) {
  return (
    <nav className="pager" aria-label={label}>
      <Button small disabled={current === 1} onClick={() => onPage(current - 1)}>
        ← Previous
      </Button>
      <span>{children}</span>
      <Button small disabled={current === pages} onClick={() => onPage(current + 1)}>
        Next →
      </Button>
    </nav>
  );
}
