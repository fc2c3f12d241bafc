import type { DashboardData } from '@palisade/protocol';
import { request } from '../../../lib/api';
import { usePagedQuery } from '../../../lib/query';

export const securityEventsKey = ['security-events'];

export const getSecurityEvents = async (cursor: string | null) => {
  const query = cursor ? `?${new URLSearchParams({ cursor })}` : '';
  const page = await request<DashboardData<'securityEvents'>>('GET', `/api/security/events${query}`);
  return { items: page.events, next_cursor: page.next_cursor, total: page.total };
};

/** Newest first, 50 a page; the pages loaded are refreshed every 30 s. */
export const useSecurityEvents = () => usePagedQuery(securityEventsKey, getSecurityEvents, { intervalMs: 30_000 });
