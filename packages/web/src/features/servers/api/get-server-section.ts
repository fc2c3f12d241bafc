import type { DashboardSection, HistoryRange, SectionName } from '@palisade/protocol';
import { request } from '../../../lib/api';
import { useQuery } from '../../../lib/query';
import { serverKey } from './get-server';

export const sectionKey = (id: number, name: string, range?: string) => [
  ...serverKey(id),
  'section',
  name,
  ...(range ? [range] : []),
];

export const getServerSection = <N extends SectionName>(id: number, name: N, range?: HistoryRange) =>
  request<DashboardSection<N>>('GET', `/api/servers/${id}/section`, { query: { name, range } });

export const useServerSection = <N extends SectionName>(id: number, name: N, range?: HistoryRange) =>
  useQuery(sectionKey(id, name, range), () => getServerSection(id, name, range), {
    intervalMs: 60_000,
  });
