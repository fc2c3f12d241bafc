import {
  type FleetAddress,
  type FleetEntry,
  type FleetEntryInput,
  type FleetLift,
  type FleetList,
  type FleetPolicy,
  type FleetPolicyInput,
  type FleetServerBans,
  PAGE_LIMIT_MAX,
} from '@palisade/protocol';
import { request } from '../../../lib/api';
import { invalidate, useQuery } from '../../../lib/query';
import { auditKey } from '../../audit/api/get-audit';

/** Fleet policies and lists (docs/protection.md, "Fleet policies"). */
export const fleetKey = ['fleet'];
const policiesKey = [...fleetKey, 'policies'];
const entriesKey = [...fleetKey, 'entries'];

export const usePolicies = () =>
  useQuery(
    policiesKey,
    async () => (await request<{ policies: FleetPolicy[] }>('GET', '/api/fleet/policies')).policies,
  );

/** Pages read for the lists panel at most (the list pages: docs/api.md, "Lists that page"). */
const ENTRY_PAGES = 5;

/** The entries in force, page by page; refreshed every 5 s, so states per server move as propagation goes. */
export const useEntries = () =>
  useQuery(
    entriesKey,
    async () => {
      const entries: FleetEntry[] = [];
      let cursor: string | null = null;
      for (let page = 0; page < ENTRY_PAGES; page++) {
        const answer: { entries: FleetEntry[]; next_cursor: string | null } = await request(
          'GET',
          '/api/fleet/entries',
          { query: { limit: String(PAGE_LIMIT_MAX), ...(cursor ? { cursor } : {}) } },
        );
        entries.push(...answer.entries);
        cursor = answer.next_cursor;
        if (!cursor) break;
      }
      return entries;
    },
    { intervalMs: 5000 },
  );

const refresh = () => Promise.all([invalidate(fleetKey), invalidate(auditKey)]);

export async function addPolicy(input: Partial<FleetPolicyInput>) {
  const { policy } = await request<{ policy: FleetPolicy }>('POST', '/api/fleet/policies', { body: input });
  await refresh();
  return policy;
}

export async function setPolicyEnabled(policy: FleetPolicy, enabled: boolean) {
  const body = {
    name: policy.name,
    trigger: policy.trigger,
    scope: policy.scope,
    ...(policy.scope === 'tags' ? { tags: policy.tags } : {}),
    ...(policy.scope === 'product' && policy.product_id !== null ? { product_id: policy.product_id } : {}),
    duration_s: policy.duration_s,
    allow_private: policy.allow_private,
    enabled,
  };
  await request('PATCH', `/api/fleet/policies/${policy.id}`, { body });
  await refresh();
}

export async function removePolicy(id: number) {
  await request('DELETE', `/api/fleet/policies/${id}`);
  await refresh();
}

export async function addEntry(input: Partial<FleetEntryInput> & { list: FleetList }) {
  const { entry } = await request<{ entry: FleetEntry }>('POST', '/api/fleet/entries', { body: input });
  await refresh();
  return entry;
}

export async function liftEntry(id: number) {
  await request('DELETE', `/api/fleet/entries/${id}`);
  await refresh();
}

export const lookUpFleetAddress = (ip: string) =>
  request<FleetAddress>('GET', '/api/fleet/addresses', { query: { ip } });

export async function liftEverywhere(ip: string) {
  const answer = await request<FleetLift>('DELETE', '/api/fleet/addresses', { query: { ip } });
  await refresh();
  return answer;
}

/** A server's reported bans: the rate it is held to and what was refused (docs/protection.md, "What a fleet may hold"). */
export const useServerBans = (serverId: number) =>
  useQuery([...fleetKey, 'servers', serverId, 'bans'], () =>
    request<FleetServerBans>('GET', `/api/fleet/servers/${serverId}/bans`),
  );
