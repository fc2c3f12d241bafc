import { request } from '../../../lib/api';
import { useQuery } from '../../../lib/query';
import type { FactsSection, HistoryRange, HistorySection, ScoreSection } from '../../../lib/wire';
import { serverKey } from './get-server';

interface Sections {
  score: ScoreSection;
  facts: FactsSection;
  history: HistorySection;
}

export const sectionKey = (id: number, name: string, range?: string) => [
  ...serverKey(id),
  'section',
  name,
  ...(range ? [range] : []),
];

export const getServerSection = <N extends keyof Sections>(id: number, name: N, range?: HistoryRange) =>
  request<Sections[N]>('GET', `/api/servers/${id}/section`, { query: { name, range } });

export const useServerSection = <N extends keyof Sections>(id: number, name: N, range?: HistoryRange) =>
  useQuery(sectionKey(id, name, range), () => getServerSection(id, name, range), {
    intervalMs: 60_000,
  });
