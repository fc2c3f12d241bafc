import {
  notifyManager,
  QueryClient,
  type QueryKey,
  useInfiniteQuery,
  useMutation as useTanstackMutation,
  useQuery as useTanstackQuery,
} from '@tanstack/react-query';
import { errorText } from './api';

/**
 * The dashboard's reads and writes run on TanStack Query (docs/decisions.md, "Dashboard on TanStack
 * Query"). Keys are arrays whose first parts name the owner (`['server', id, …]`), so invalidating a
 * prefix refreshes everything under it. This file only sets the defaults the dashboard has always
 * had and turns a query's state into the view the components read (error as plain words).
 */
// Readers hear of a cache change at once, not on a later tick: a sign-in puts the account in the
// cache and then navigates, and both must reach React in the same render, or the app would see the
// new address while still signed out and send the user back to sign in (app/app.tsx).
notifyManager.setScheduler((callback) => callback());

export function createQueryClient() {
  return new QueryClient({
    defaultOptions: {
      queries: {
        // A reader mounting within a second of the last answer reuses it; otherwise it fetches.
        staleTime: 1000,
        // The console's answers are final (a 4xx will not change on retry); show errors at once.
        retry: false,
        refetchOnWindowFocus: false,
      },
      mutations: { retry: false },
    },
  });
}

export const queryClient = createQueryClient();

/**
 * Makes every query whose key starts with `prefix` (or, `exact`, only that key) fetch again (those on screen at once). A request
 * already on its way is kept, not cancelled: a 401 asks for the account again from inside the
 * account's own request (app/app.tsx), which must not cancel and restart itself.
 */
export const invalidate = (prefix: QueryKey, { exact = false }: { exact?: boolean } = {}) =>
  queryClient.invalidateQueries({ queryKey: prefix, exact }, { cancelRefetch: false });

/** Puts a known answer in the cache (e.g. the account a sign-in returned), without a request. */
export const setQueryData = (key: QueryKey, data: unknown) => queryClient.setQueryData(key, data);

/** Drops everything: after sign-out nothing of the last account stays in memory. */
export const clearQueries = () => queryClient.resetQueries();

/** Drops everything but the queries under `keep`: after a switch of team, nothing of the last team stays. */
export const clearQueriesBut = (keep: QueryKey) =>
  queryClient.resetQueries({ predicate: (q) => !keep.every((part, i) => q.queryKey[i] === part) });

/** Drops the queries that failed: once a refusal is lifted (two-factor turned on), their pages ask again. */
export const clearFailedQueries = () => queryClient.resetQueries({ predicate: (q) => q.state.status === 'error' });

export interface QueryState<T> {
  data: T | undefined;
  error: unknown;
  errorMessage: string | null;
  /** True until the first answer (or error) arrives. */
  loading: boolean;
  /** True while any request for this key is on its way. */
  fetching: boolean;
  refetch: () => Promise<void>;
}

export interface QueryOptions {
  /** Fetch again this often while mounted; paused while the tab is hidden, at once when it shows again. */
  intervalMs?: number;
}

/** A read; `key: null` waits (nothing is fetched). */
export function useQuery<T>(
  key: QueryKey | null,
  fetcher: () => Promise<T>,
  options: QueryOptions = {},
): QueryState<T> {
  const { intervalMs } = options;
  const query = useTanstackQuery({
    queryKey: key ?? ['disabled'],
    queryFn: fetcher,
    enabled: key !== null,
    ...(intervalMs
      ? { refetchInterval: intervalMs, refetchIntervalInBackground: false, refetchOnWindowFocus: true }
      : {}),
  });
  return {
    data: query.data,
    error: query.error,
    errorMessage: query.error ? errorText(query.error) : null,
    loading: key !== null && query.isPending,
    fetching: query.isFetching,
    refetch: async () => {
      await query.refetch();
    },
  };
}

/** One page of a list that pages (docs/api.md, "Lists that page"). */
export interface Page<T> {
  items: T[];
  next_cursor: string | null;
  total: number;
}

export interface PagedState<T> extends QueryState<{ items: T[]; total: number }> {
  /** Whether the console has more after the pages loaded. */
  hasMore: boolean;
  loadingMore: boolean;
  loadMore: () => void;
}

/**
 * A list read a page at a time: the pages loaded so far as one list (an item that moved between
 * pages while they loaded is shown once), with the total of the newest page and "load more".
 */
export function usePagedQuery<T extends { id: number }>(
  key: QueryKey,
  fetchPage: (cursor: string | null) => Promise<Page<T>>,
  options: QueryOptions = {},
): PagedState<T> {
  const { intervalMs } = options;
  const query = useInfiniteQuery({
    queryKey: key,
    queryFn: ({ pageParam }) => fetchPage(pageParam),
    initialPageParam: null as string | null,
    getNextPageParam: (last) => last.next_cursor,
    ...(intervalMs
      ? { refetchInterval: intervalMs, refetchIntervalInBackground: false, refetchOnWindowFocus: true }
      : {}),
  });
  let data: { items: T[]; total: number } | undefined;
  if (query.data) {
    const seen = new Set<number>();
    const items = query.data.pages.flatMap((p) => p.items).filter((i) => !seen.has(i.id) && seen.add(i.id));
    data = { items, total: query.data.pages[0]?.total ?? items.length };
  }
  return {
    data,
    error: query.error,
    errorMessage: query.error ? errorText(query.error) : null,
    loading: query.isPending,
    fetching: query.isFetching,
    refetch: async () => {
      await query.refetch();
    },
    hasMore: query.hasNextPage,
    loadingMore: query.isFetchingNextPage,
    loadMore: () => void query.fetchNextPage(),
  };
}

export interface MutationState<I, O> {
  run: (input: I) => Promise<O | undefined>;
  pending: boolean;
  error: string | null;
  data: O | undefined;
  reset: () => void;
}

/** A write: tracks pending and error, never throws into the component. */
export function useMutation<I, O>(action: (input: I) => Promise<O>, onDone?: (out: O) => void): MutationState<I, O> {
  const mutation = useTanstackMutation({ mutationFn: action, ...(onDone ? { onSuccess: onDone } : {}) });
  return {
    run: (input: I) => mutation.mutateAsync(input).catch(() => undefined),
    pending: mutation.isPending,
    error: mutation.error ? errorText(mutation.error) : null,
    data: mutation.data,
    reset: mutation.reset,
  };
}
