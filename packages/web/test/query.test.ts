import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { QueryClientProvider } from '@tanstack/react-query';
import { createElement } from 'react';
import { renderToString } from 'react-dom/server';
import { liveMetricsKey } from '../src/features/servers/api/get-live-metrics';
import { serverKey } from '../src/features/servers/api/get-server';
import { sectionKey } from '../src/features/servers/api/get-server-section';
import { getServers, serversKey } from '../src/features/servers/api/get-servers';
import { allTicketsKey, ticketKey, ticketsKey } from '../src/features/tickets/api/scope';
import { ApiError } from '../src/lib/api';
import { invalidate, queryClient, setQueryData, useQuery } from '../src/lib/query';

const seen: unknown[] = [];

/** Renders the hooks once (react-dom/server) and records what components would read. */
function Probe() {
  const ok = useQuery(serversKey, getServers);
  const failed = useQuery(['failing'], () => Promise.resolve(1));
  const waiting = useQuery(null, () => Promise.resolve(1));
  seen.push({ data: ok.data, loading: ok.loading }, failed.errorMessage, waiting.loading);
  return null;
}

const invalidated = (key: readonly unknown[]) => queryClient.getQueryState(key)?.isInvalidated ?? false;

describe('lib/query on TanStack Query', () => {
  test('invalidating a server refreshes its sections and metrics only (not server 10)', async () => {
    queryClient.clear();
    for (const key of [serverKey(1), sectionKey(1, 'score'), liveMetricsKey(1), serverKey(10), sectionKey(10, 'score')])
      setQueryData(key, {});
    await invalidate(serverKey(1));
    assert.equal(invalidated(sectionKey(1, 'score')), true);
    assert.equal(invalidated(liveMetricsKey(1)), true);
    assert.equal(invalidated(serverKey(10)), false, 'a string prefix "server:1" used to match "server:10"');
    assert.equal(invalidated(sectionKey(10, 'score')), false);
  });

  test('a ticket write refreshes both scopes', async () => {
    queryClient.clear();
    setQueryData(ticketsKey('user'), []);
    setQueryData(ticketKey('admin', 4), {});
    await invalidate(allTicketsKey);
    assert.equal(invalidated(ticketsKey('user')), true);
    assert.equal(invalidated(ticketKey('admin', 4)), true);
  });

  test('useQuery gives components data, loading and the error in plain words', async () => {
    queryClient.clear();
    setQueryData(serversKey, { servers: [] });
    // A query that had an answer and then failed: it keeps the answer and shows the error.
    setQueryData(['failing'], 1);
    await queryClient
      .fetchQuery({
        queryKey: ['failing'],
        staleTime: 0,
        queryFn: () => Promise.reject(new ApiError(429, 'too many', 7)),
      })
      .catch(() => {});
    seen.length = 0;
    renderToString(createElement(QueryClientProvider, { client: queryClient }, createElement(Probe)));
    assert.deepEqual(seen, [{ data: { servers: [] }, loading: false }, 'Too many attempts. Try again in 7 s.', false]);
  });
});
