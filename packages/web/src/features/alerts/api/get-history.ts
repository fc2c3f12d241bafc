import { request } from '../../../lib/api';
import { usePagedQuery } from '../../../lib/query';
import type { AlertHistoryEntry } from './types';

export const alertHistoryKey = ['alerts', 'history'];

export const getHistory = async (cursor: string | null) => {
  const query = new URLSearchParams({ limit: '100', ...(cursor ? { cursor } : {}) });
  const page = await request<{ history: AlertHistoryEntry[]; next_cursor: string | null; total: number }>(
    'GET',
    `/api/alerts/history?${query}`,
  );
  return { items: page.history, next_cursor: page.next_cursor, total: page.total };
};

/** Newest first, 100 a page; the pages loaded are refreshed every 15 s. */
export const useAlertHistory = () => usePagedQuery(alertHistoryKey, getHistory, { intervalMs: 15_000 });
