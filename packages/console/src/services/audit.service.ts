import { AUDIT_SUMMARY_MAX, type AuditAction, type AuditEntry, type AuditPage } from '@palisade/protocol';
import type { AuditLogTable, Database } from '../db/schema.js';
import { deleteAuditEntriesBefore, insertAuditEntry, listAuditEntries } from '../repositories/audit.repository.js';
import { findServerOwner } from '../repositories/servers.repository.js';
import type { PageRequest } from '../validation.js';

/** Keys whose values never reach the log: keys, tokens, secrets, passwords. */
const SECRET_KEY = /secret|token|password|passwd|key|auth|signature|cookie/i;
const LONG = 120;

/** A URL without what may carry a secret (user, password, path, query): its origin only. */
function safeUrl(text: string): string | null {
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) return null;
  try {
    const url = new URL(text);
    return url.pathname === '/' && !url.search && !url.username ? url.origin : `${url.origin}/…`;
  } catch {
    return '[an address]';
  }
}

function scrub(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') {
    const url = safeUrl(value);
    if (url !== null) return url;
    return value.length > LONG ? `${value.slice(0, LONG)}…` : value;
  }
  if (Array.isArray(value)) {
    const shown = value.slice(0, 10).map((v) => scrub(v, depth + 1));
    return value.length > 10 ? [...shown, `… ${value.length - 10} more`] : shown;
  }
  if (value && typeof value === 'object') {
    if (depth > 3) return '{…}';
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k, SECRET_KEY.test(k) ? '[hidden]' : scrub(v, depth + 1)]),
    );
  }
  return value;
}

/**
 * What a request changed, in one line for the log: its query and its JSON body with every secret
 * removed (values under secret-looking keys hidden, URLs cut to their origin), long values cut, at
 * most AUDIT_SUMMARY_MAX characters. A body that is not JSON is named by its size only.
 */
export function auditSummary(query: string, body: Buffer | undefined): string {
  const parts: string[] = [];
  if (query) {
    const params = new URLSearchParams(query);
    parts.push([...params].map(([k, v]) => `${k}=${SECRET_KEY.test(k) ? '[hidden]' : String(scrub(v))}`).join('&'));
  }
  if (body && body.length > 0) {
    try {
      parts.push(JSON.stringify(scrub(JSON.parse(body.toString('utf8')))));
    } catch {
      parts.push(`(${body.length} bytes, not JSON)`);
    }
  }
  const text = parts.join(' ') || '(no body)';
  return text.length > AUDIT_SUMMARY_MAX ? `${text.slice(0, AUDIT_SUMMARY_MAX - 1)}…` : text;
}

export interface AuditActor {
  kind: AuditLogTable['actor_kind'];
  id: number | null;
  label: string;
  accountId: number;
  /** An admin may act on any account's server; the entry is then filed under that account. */
  admin: boolean;
}

const entryView = (row: Awaited<ReturnType<typeof listAuditEntries>>['items'][number]): AuditEntry => ({
  id: Number(row.id),
  at: Number(row.at),
  action: row.action as AuditAction,
  actor_kind: row.actor_kind,
  actor: row.actor,
  ip: row.ip,
  server_id: row.server_id === null ? null : Number(row.server_id),
  server_name: row.server_name,
  method: row.method,
  path: row.path,
  summary: row.summary,
  status: Number(row.status),
  outcome: row.outcome,
});

/** The audit log (docs/protection.md, "Audit log"): entries are added here and nowhere else, and never edited. */
export function createAuditService({ db, clock }: { db: Database; clock: () => number }) {
  /**
   * A fleet change (docs/protection.md, "Fleet policies"): a policy or list entry changed by a
   * user, or an entry applied to or removed from one server by the console for a policy.
   */
  async function fleet(input: {
    accountId: number;
    action: Exclude<AuditAction, 'control.write'>;
    actor: { kind: AuditLogTable['actor_kind']; id: number | null; label: string };
    ip: string | null;
    server?: { id: number; name: string };
    method?: string;
    path?: string;
    summary: string;
    status: number;
    outcome: string;
  }) {
    await insertAuditEntry(db, {
      account_id: input.accountId,
      at: clock(),
      actor_kind: input.actor.kind,
      actor_id: input.actor.id,
      actor: input.actor.label,
      ip: input.ip,
      action: input.action,
      server_id: input.server?.id ?? null,
      server_name: input.server?.name ?? null,
      method: input.method ?? null,
      path: input.path ?? null,
      summary:
        input.summary.length > AUDIT_SUMMARY_MAX ? `${input.summary.slice(0, AUDIT_SUMMARY_MAX - 1)}…` : input.summary,
      status: input.status,
      outcome: input.outcome.slice(0, 300),
    });
  }

  return {
    /**
     * One change made to a server through the console's control proxy, under the account that owns
     * the server (an admin acting on another account's server shows there, named), or under the
     * actor's own account, without the server, when it is not one the actor may act on.
     */
    async controlWrite(input: {
      actor: AuditActor;
      ip: string | null;
      serverId: number;
      method: string;
      path: string;
      query: string;
      body: Buffer | undefined;
      status: number;
      outcome: string;
    }) {
      // Filed under the server's owner only when the actor may act on it (its owner, or an admin);
      // a try at someone else's server is the actor's own business and names no server.
      const found = await findServerOwner(db, input.serverId);
      const server =
        found && (Number(found.account_id) === input.actor.accountId || input.actor.admin) ? found : undefined;
      await insertAuditEntry(db, {
        account_id: server ? Number(server.account_id) : input.actor.accountId,
        at: clock(),
        actor_kind: input.actor.kind,
        actor_id: input.actor.id,
        actor: input.actor.label,
        ip: input.ip,
        action: 'control.write',
        server_id: server ? Number(server.id) : null,
        server_name: server?.name ?? null,
        method: input.method,
        path: input.path,
        summary: auditSummary(input.query, input.body),
        status: input.status,
        outcome: input.outcome.slice(0, 300),
      });
    },

    fleet,

    /** A change to a team, its members or its invitations, naming the person who made it (docs/teams.md). */
    async team(input: {
      accountId: number;
      action: Extract<AuditAction, `team.${string}` | `member.${string}` | `invitation.${string}` | `sso.${string}`>;
      actor: { person_id: number; email: string };
      ip: string | null;
      summary: string;
    }) {
      await fleet({
        accountId: input.accountId,
        action: input.action,
        actor: { kind: 'session', id: input.actor.person_id, label: input.actor.email },
        ip: input.ip,
        summary: input.summary,
        status: 200,
        outcome: 'done',
      });
    },

    /** A page of an account's entries, newest first (docs/api.md, "Lists that page"). */
    async list(accountId: number, page: PageRequest): Promise<AuditPage> {
      const { items, next_cursor, total } = await listAuditEntries(db, accountId, page);
      return { entries: items.map(entryView), next_cursor, total };
    },

    /** Entries older than the retention (PALISADE_AUDIT_RETENTION_DAYS). */
    expire: (days: number) => deleteAuditEntriesBefore(db, clock() - days * 86_400_000),
  };
}

export type AuditService = ReturnType<typeof createAuditService>;
