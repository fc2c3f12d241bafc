import type { AuditPage } from '@palisade/protocol';
import { request } from '../../../lib/api';
import { useQuery } from '../../../lib/query';

export const auditKey = ['audit'];

export const getAuditPage = (cursor?: string) =>
  request<AuditPage>('GET', '/api/audit', { query: cursor ? { cursor } : {} });

/** The newest page; older pages are fetched on request (AuditLog keeps them). Refreshed every 30 s. */
export const useAuditLog = () => useQuery(auditKey, () => getAuditPage(), { intervalMs: 30_000 });
