import { request } from '../../../lib/api';
import { useQuery } from '../../../lib/query';
import type { AlertHistoryEntry } from './types';

export const alertHistoryKey = ['alerts', 'history'];

export const getHistory = () => request<{ history: AlertHistoryEntry[] }>('GET', '/api/alerts/history?limit=100');

export const useAlertHistory = () => useQuery(alertHistoryKey, getHistory, { intervalMs: 15_000 });
