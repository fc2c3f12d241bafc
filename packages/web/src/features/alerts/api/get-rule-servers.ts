import type { DashboardServerSummary } from '@palisade/protocol';
import { request } from '../../../lib/api';
import { useQuery } from '../../../lib/query';

/** The fleet's names and tags, for choosing the servers a rule applies to. */
export const ruleServersKey = ['alerts', 'servers'];

export const getRuleServers = () => request<{ servers: DashboardServerSummary[] }>('GET', '/api/servers');

export const useRuleServers = () => useQuery(ruleServersKey, getRuleServers);
