import { request } from '../../../lib/api';
import { useQuery } from '../../../lib/query';
import type { SecurityEvent } from '../../../lib/wire';

export const securityEventsKey = ['security-events'];

export const getSecurityEvents = async () => {
  const body = await request<{ events: SecurityEvent[] } | SecurityEvent[]>('GET', '/api/security/events');
  return Array.isArray(body) ? body : body.events;
};

/** Newest first; refreshed every 30 s. */
export const useSecurityEvents = () => useQuery(securityEventsKey, getSecurityEvents, { intervalMs: 30_000 });
