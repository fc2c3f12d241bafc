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
