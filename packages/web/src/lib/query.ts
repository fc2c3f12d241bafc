import { useCallback, useEffect, useState, useSyncExternalStore } from 'react';
import { errorText } from './api';

/**
 * A small shared cache for reads: components asking for the same key share one request, and
 * `invalidate(prefix)` after a write makes every reader of that prefix fetch again.
 */
interface Entry {
  data: unknown;
  error: unknown;
  loading: boolean;
  fetchedAt: number;
  inflight: Promise<void> | null;
  listeners: Set<() => void>;
  fetcher: (() => Promise<unknown>) | null;
  version: number;
}

const cache = new Map<string, Entry>();

function entryOf(key: string): Entry {
  let entry = cache.get(key);
  if (!entry) {
    entry = {
      data: undefined,
      error: null,
      loading: false,
      fetchedAt: 0,
      inflight: null,
      listeners: new Set(),
      fetcher: null,
      version: 0,
    };
    cache.set(key, entry);
  }
  return entry;
}

function emit(entry: Entry) {
  entry.version++;
  for (const l of entry.listeners) l();
}

function load(key: string): Promise<void> {
  const entry = entryOf(key);
  if (entry.inflight) return entry.inflight;
  const fetcher = entry.fetcher;
  if (!fetcher) return Promise.resolve();
  entry.loading = true;
  emit(entry);
  entry.inflight = fetcher()
    .then(
      (data) => {
        entry.data = data;
        entry.error = null;
      },
      (err: unknown) => {
        entry.error = err;
      },
    )
    .finally(() => {
      entry.loading = false;
      entry.inflight = null;
      entry.fetchedAt = Date.now();
      emit(entry);
    });
  return entry.inflight;
}

/** Makes every query whose key starts with `prefix` fetch again (those on screen at once). */
export function invalidate(prefix: string) {
  for (const [key, entry] of cache) {
    if (!key.startsWith(prefix)) continue;
    if (entry.listeners.size > 0) void load(key);
    else cache.delete(key);
  }
}

/** Puts a known answer in the cache (e.g. the account a sign-in returned), without a request. */
export function setQueryData(key: string, data: unknown) {
  const entry = entryOf(key);
  entry.data = data;
  entry.error = null;
  entry.fetchedAt = Date.now();
  emit(entry);
}

/** Drops everything: after sign-out nothing of the last account stays in memory. */
export function clearQueries() {
  for (const [key, entry] of cache) {
    if (entry.listeners.size === 0) cache.delete(key);
    else {
      entry.data = undefined;
      entry.error = null;
    }
  }
}

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
  /** Fetch again this often while mounted. */
  intervalMs?: number;
  /** With an interval: stop while the tab is hidden, fetch at once when it shows again. */
  pauseWhenHidden?: boolean;
}

export function useQuery<T>(key: string | null, fetcher: () => Promise<T>, options: QueryOptions = {}): QueryState<T> {
  const entry = key ? entryOf(key) : null;
  if (entry) entry.fetcher = fetcher;
  const subscribe = useCallback(
    (listener: () => void) => {
      if (!key) return () => {};
      const e = entryOf(key);
      e.listeners.add(listener);
      return () => e.listeners.delete(listener);
    },
    [key],
  );
  useSyncExternalStore(subscribe, () => (key ? entryOf(key).version : -1));

  useEffect(() => {
    if (!key) return;
    const e = entryOf(key);
    if (e.data === undefined || Date.now() - e.fetchedAt > 1000) void load(key);
  }, [key]);

  const { intervalMs, pauseWhenHidden } = options;
  useEffect(() => {
    if (!key || !intervalMs) return;
    let timer: ReturnType<typeof setInterval> | null = null;
    const start = () => {
      if (timer === null) timer = setInterval(() => void load(key), intervalMs);
    };
    const stop = () => {
      if (timer !== null) clearInterval(timer);
      timer = null;
    };
    const onVisibility = () => {
      if (document.visibilityState === 'visible') {
        void load(key);
        start();
      } else stop();
    };
    if (!pauseWhenHidden || document.visibilityState === 'visible') start();
    if (pauseWhenHidden) document.addEventListener('visibilitychange', onVisibility);
    return () => {
      stop();
      if (pauseWhenHidden) document.removeEventListener('visibilitychange', onVisibility);
    };
  }, [key, intervalMs, pauseWhenHidden]);

  const refetch = useCallback(() => (key ? load(key) : Promise.resolve()), [key]);
  return {
    data: entry?.data as T | undefined,
    error: entry?.error ?? null,
    errorMessage: entry?.error ? errorText(entry.error) : null,
    loading: entry ? entry.data === undefined && entry.error === null : false,
    fetching: entry?.loading ?? false,
    refetch,
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
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [data, setData] = useState<O | undefined>(undefined);
  const run = async (input: I) => {
    setPending(true);
    setError(null);
    try {
      const out = await action(input);
      setData(out);
      onDone?.(out);
      return out;
    } catch (err) {
      setError(errorText(err));
      return undefined;
    } finally {
      setPending(false);
    }
  };
  return {
    run,
    pending,
    error,
    data,
    reset: () => {
      setError(null);
      setData(undefined);
    },
  };
}
