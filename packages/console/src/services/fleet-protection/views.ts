import type { CheckinBan, FleetApplication, FleetEntry, FleetPolicy, FleetScope } from '@palisade/protocol';
import { type Network, readNetwork } from '@palisade/protocol/networks';
import type { Selectable } from 'kysely';
import type { FleetEntriesTable, FleetPoliciesTable } from '../../db/schema.js';
import { badRequest } from '../../errors.js';
import type { applicationsOf } from '../../repositories/fleet.repository.js';
import { serverTags } from '../servers/index.js';

/** Scopes, the rows as the API shows them, and the address parser's wording (docs/protection.md, "Fleet policies"). */

export interface Scope {
  scope: FleetScope;
  tags: string[];
  product_id: number | null;
}

export const tagsText = (tags: string[]) => (tags.length > 0 ? tags.join(',') : null);
const tagsOf = (text: string | null) => (text ? text.split(',').filter(Boolean) : []);

export function scopeOf(row: Pick<FleetPoliciesTable, 'scope_kind' | 'scope_tags' | 'scope_product_id'>): Scope {
  return {
    scope: row.scope_kind,
    tags: tagsOf(row.scope_tags),
    product_id: row.scope_product_id === null ? null : Number(row.scope_product_id),
  };
}

export function inScope(scope: Scope, server: { tags: string; product_id: number }): boolean {
  if (scope.scope === 'all') return true;
  if (scope.scope === 'product') return Number(server.product_id) === scope.product_id;
  const tags = serverTags(server.tags);
  return scope.tags.some((t) => tags.includes(t));
}

export const policyView = (row: Selectable<FleetPoliciesTable>): FleetPolicy => ({
  id: Number(row.id),
  name: row.name,
  trigger: row.trigger,
  ...scopeOf(row),
  duration_s: row.duration_s === null ? null : Number(row.duration_s),
  enabled: Number(row.enabled) === 1,
  allow_private: Number(row.allow_private) === 1,
  created_at: Number(row.created_at),
  updated_at: Number(row.updated_at),
});

export type EntryRow = Selectable<FleetEntriesTable>;
export type ApplicationRow = Awaited<ReturnType<typeof applicationsOf>>[number];

export const applicationView = (a: ApplicationRow): FleetApplication => ({
  server_id: Number(a.server_id),
  server_name: a.server_name,
  want: a.want,
  state: a.state,
  reason: a.reason,
  attempts: Number(a.attempts),
  next_attempt_at: a.state === 'pending' ? Number(a.next_attempt_at) : null,
  applied_at: a.applied_at === null ? null : Number(a.applied_at),
});

export function entryView(row: EntryRow, apps: ApplicationRow[]): FleetEntry {
  const counts = { applied: 0, pending: 0, failed: 0 };
  for (const a of apps) if (a.want === 'present') counts[a.state]++;
  return {
    id: Number(row.id),
    list: row.list,
    address: row.address,
    reason: row.reason,
    origin: {
      kind: row.origin_kind,
      server_id: row.origin_server_id === null ? null : Number(row.origin_server_id),
      server_name: row.origin_server_name,
      event: row.origin_event,
    },
    policy_id: row.policy_id === null ? null : Number(row.policy_id),
    ...scopeOf(row),
    created_by: row.created_by,
    created_at: Number(row.created_at),
    expires_at: row.expires_at === null ? null : Number(row.expires_at),
    lifted_at: row.lifted_at === null ? null : Number(row.lifted_at),
    counts,
  };
}

/** The address parser the agents use (packages/protocol/src/networks.ts), with their wording. */
export function parseIp(raw: string, field = 'ip'): Network {
  const text = raw.trim();
  const net = readNetwork(text);
  if (!net) throw badRequest(`${field}: "${text.slice(0, 80)}" is not an IP address or CIDR range`);
  if (net.prefix === 0)
    throw badRequest(
      `${field}: ${net.text} covers every ${net.family === 4 ? 'IPv4' : 'IPv6'} address, so it would block everything`,
    );
  return net;
}

export const activeKey = (accountId: number, list: FleetEntriesTable['list'], address: string) =>
  `${accountId}:${list}:${address}`;

export function triggerMatches(trigger: FleetPoliciesTable['trigger'], ban: CheckinBan) {
  if (trigger === 'any') return true;
  return trigger === 'pattern' ? ban.kind === 'log_pattern' : ban.kind !== 'log_pattern';
}
