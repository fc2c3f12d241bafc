import {
  type CheckinBan,
  type CheckinBansOutcome,
  hasControlCharacters,
  REPORTED_BAN_MAX_TTL_S,
  REPORTED_BANS_PER_MINUTE,
  REPORTED_MIN_PREFIX,
  type RefusedBanReason,
} from '@palisade/protocol';
import { contains, type Network, overlaps, readNetwork } from '@palisade/protocol/networks';
import type { Database, FleetEntriesTable } from '../../db/schema.js';
import {
  addRefusedBans,
  listActiveEntries,
  listPolicies,
  retireExpiredEntries,
  scopeServers,
  takeBanQuota,
} from '../../repositories/fleet.repository.js';
import type { AuditService } from '../audit.service.js';
import type { OwnAddress } from './own-addresses.js';

export type NewFleetEntry = Omit<
  FleetEntriesTable,
  'id' | 'account_id' | 'active_key' | 'lifted_at' | 'lifted_by' | 'address'
> & { address: string };

/**
 * The bans a check-in reports (docs/protection.md, "What a fleet may hold", "Fleet policies"):
 * judged first — a refused ban is dropped and counted, never the check-in — then bounded per server
 * per minute, then each one a policy covers becomes a fleet entry for the servers that need it.
 */
export function createReportedBans({
  db,
  clock,
  audit,
  ownAddressIn,
  createEntry,
  retryNow,
}: {
  db: Database;
  clock: () => number;
  audit: AuditService;
  /** The console's own address a network covers (own-addresses.ts), or null. */
  ownAddressIn: (net: Network) => Promise<OwnAddress | null>;
  /** Creates an entry in force for the servers `to`; null when the address already has one. */
  createEntry: (accountId: number, row: NewFleetEntry, to: number[]) => Promise<number | null>;
  /** The server gets at once what it missed while it was away. */
  retryNow: (serverId: number) => Promise<unknown>;
}) {
  /**
   * A check-in arrived: the server gets at once what it missed, and each ban it reported that a
   * policy covers becomes a fleet entry for the other servers in scope that do not hold the address
   * through the fleet yet (judged per server: an entry scoped to some servers does not stop the
   * others), unless the fleet whitelist holds it there. What a fleet may hold is checked first
   * (docs/protection.md, "What a fleet may hold"): a refused ban is dropped and counted, never the
   * check-in. Answers what became of the bans, for the check-in's answer.
   */
  async function checkedIn(
    server: { id: number; account_id: number; name: string },
    bans: CheckinBan[],
  ): Promise<CheckinBansOutcome | undefined> {
    await retryNow(server.id);
    if (bans.length === 0) return undefined;
    const now = clock();
    const refused: Partial<Record<RefusedBanReason, number>> = {};
    let last = '';
    const refuse = (reason: RefusedBanReason, why: string) => {
      refused[reason] = (refused[reason] ?? 0) + 1;
      last = why;
    };
    const valid: { ban: CheckinBan; net: Network }[] = [];
    for (const ban of bans) {
      const text = [ban.ip, ban.kind, ban.pattern ?? '', ban.attack_id ?? ''];
      if (text.some(hasControlCharacters)) {
        refuse('control_characters', 'a ban with control characters in its ip, kind, pattern or attack_id');
        continue;
      }
      const net = readNetwork(ban.ip);
      if (!net) {
        refuse('invalid', `${ban.ip.slice(0, 64)} is not an IP address or CIDR range`);
        continue;
      }
      const widest = REPORTED_MIN_PREFIX[net.family];
      if (net.prefix < widest) {
        refuse('too_wide', `${net.text} is wider than /${widest}`);
        continue;
      }
      const special = specialUse(net);
      if (special) {
        refuse('special_use', `${net.text} is ${special}`);
        continue;
      }
      const ownAddress = await ownAddressIn(net);
      if (ownAddress) {
        refuse('console_address', `${net.text} is the console's own address (${ownAddress.what})`);
        continue;
      }
      valid.push({ ban, net });
    }
    const granted =
      valid.length === 0
        ? 0
        : await takeBanQuota(db, server.id, Math.floor(now / 60_000) * 60_000, valid.length, REPORTED_BANS_PER_MINUTE);
    for (const { net } of valid.slice(granted))
      refuse('rate', `${net.text}: over ${REPORTED_BANS_PER_MINUTE} reported bans a minute`);
    const dropped = await propagateReported(server, valid.slice(0, granted), refuse);
    await addRefusedBans(db, server.id, refused, last, now);
    return { accepted: granted - dropped, refused };
  }

  /** Reported bans within the rate: each one a policy covers becomes an entry for the servers that need it. */
  async function propagateReported(
    server: { id: number; account_id: number; name: string },
    bans: { ban: CheckinBan; net: Network }[],
    refuse: (reason: RefusedBanReason, why: string) => void,
  ): Promise<number> {
    if (bans.length === 0) return 0;
    const policies = (await listPolicies(db, server.account_id)).filter((p) => Number(p.enabled) === 1);
    if (policies.length === 0) return 0;
    const all = await scopeServers(db, server.account_id);
    const me = all.find((s) => Number(s.id) === server.id);
    if (!me) return 0;
    let dropped = 0;
    await retireExpiredEntries(db, clock());
    const held = (await listActiveEntries(db, server.account_id)).map((e) => ({
      list: e.list,
      net: readNetwork(e.address),
      scope: scopeOf(e),
      origin: e.origin_server_id === null ? null : Number(e.origin_server_id),
    }));
    /** The fleet already blocks `net` on this server, or whitelists it there (the whitelist wins). */
    const covered = (net: Network, s: (typeof all)[number]) =>
      held.some(
        (h) =>
          h.net !== null &&
          (h.list === 'black' ? contains(h.net, net) : overlaps(h.net, net)) &&
          (h.origin === Number(s.id) || inScope(h.scope, s)),
      );
    for (const { ban, net } of bans) {
      const policy = policies.find((p) => triggerMatches(p.trigger, ban) && inScope(scopeOf(p), me));
      if (!policy) continue;
      if (isPrivate(net) && Number(policy.allow_private) !== 1) {
        refuse('private', `${net.text} is a private address (policy ${policy.id} does not allow_private)`);
        dropped++;
        continue;
      }
      const scope = scopeOf(policy);
      const to = all
        .filter((s) => Number(s.id) !== server.id && inScope(scope, s) && !covered(net, s))
        .map((s) => Number(s.id));
      if (to.length === 0) continue;
      const now = clock();
      const ttlS = Math.min(
        policy.duration_s === null ? (ban.ttl_s ?? REPORTED_BAN_MAX_TTL_S) : Number(policy.duration_s),
        REPORTED_BAN_MAX_TTL_S,
      );
      const event =
        ban.kind === 'log_pattern'
          ? `pattern ${ban.pattern ?? '?'}`
          : `${ban.kind} attack ${ban.attack_id ?? ''}`.trim();
      const id = await createEntry(
        server.account_id,
        {
          list: 'black',
          address: net.text,
          reason: `${event} on ${server.name}`.slice(0, 180),
          origin_kind: ban.kind === 'log_pattern' ? 'pattern' : 'attack',
          origin_server_id: server.id,
          origin_server_name: server.name,
          origin_event: event.slice(0, 200),
          policy_id: Number(policy.id),
          scope_kind: scope.scope,
          scope_tags: tagsText(scope.tags),
          scope_product_id: scope.product_id,
          created_by: `fleet policy ${policy.id}`,
          created_at: now,
          expires_at: Math.min(ban.at, now) + ttlS * 1000,
        },
        to,
      );
      held.push({ list: 'black', net, scope, origin: server.id });
      if (id === null) continue; // another process heard of it first, or the address has an entry: propagated once
      await audit.fleet({
        accountId: server.account_id,
        action: 'fleet.entry',
        actor: { kind: 'console', id: Number(policy.id), label: `fleet policy ${policy.id}` },
        ip: null,
        server: { id: server.id, name: server.name },
        method: 'POST',
        path: 'fleet/entries',
        summary: `${net.text} banned on ${server.name} (${event}); propagating to ${to.length} server${to.length === 1 ? '' : 's'} for ${ttlS} s`,
        status: 201,
        outcome: 'done',
      });
    }
    return dropped;
  }

  return { checkedIn };
}

import { isPrivate, specialUse } from './special-use.js';
import { inScope, scopeOf, tagsText, triggerMatches } from './views.js';
