import type { AgentMetrics } from '@palisade/protocol';
import { proxyRequest } from '../../../lib/api';
import { useQuery } from '../../../lib/query';
import { serverKey } from './get-server';

/** The spec's guidance: poll every 2 s while the server page is open, never faster. */
export const LIVE_INTERVAL_MS = 2000;

export const liveMetricsKey = (id: number) => [...serverKey(id), 'metrics'];

export const getLiveMetrics = (id: number) => proxyRequest<AgentMetrics>('GET', `/api/servers/${id}/metrics`);

/** Polled through the console proxy while the tab is visible; paused while it is hidden. */
export const useLiveMetrics = (id: number) =>
  useQuery(liveMetricsKey(id), () => getLiveMetrics(id), { intervalMs: LIVE_INTERVAL_MS });
