import type { Database } from '../../db/schema.js';
import { badRequest, notFound } from '../../errors.js';
import {
  accountServerIds,
  alertHistory,
  deleteMute,
  listMutes,
  setMute,
} from '../../repositories/alerts.repository.js';
import type { PageRequest } from '../../validation.js';
import type { AlertNotification } from '../notifications.service.js';

type HistoryRow = Awaited<ReturnType<typeof alertHistory>>['items'][number];

/** One sent (or queued) notification as the history shows it. */
function historyItem(r: HistoryRow) {
  const n = JSON.parse(r.payload) as AlertNotification;
  const webhook = Number(r.channel_id) === 0;
  return {
    id: Number(r.id),
    kind: r.kind,
    title: n.title,
    body: n.body,
    rule_id: n.rule_id,
    server_id: n.server_id,
    channel_id: Number(r.channel_id),
    channel: webhook ? 'account webhook' : (r.channel_name ?? 'deleted channel'),
    channel_kind: webhook ? 'webhook' : r.channel_kind,
    status: r.status,
    attempts: Number(r.attempts),
    created_at: Number(r.created_at),
    delivered_at: r.delivered_at === null ? null : Number(r.delivered_at),
    last_error: r.last_error ?? null,
  };
}

/** What alerts sent (docs/alerts.md, "History") and the servers muted for maintenance. */
export function createAlertHistory({ db, clock }: { db: Database; clock: () => number }) {
  return {
    /** A page of the alert history, newest first, with the cursor of the next. */
    async history(accountId: number, page: PageRequest) {
      const { items, next_cursor, total } = await alertHistory(db, accountId, page);
      return { history: items.map(historyItem), next_cursor, total };
    },

    async listMutes(accountId: number) {
      return (await listMutes(db, accountId, clock())).map((m) => ({
        server_id: Number(m.server_id),
        until: Number(m.until),
      }));
    },

    /** Mutes a server's alerts until `until` (maintenance): states still change, nothing is sent. */
    async muteServer(accountId: number, serverId: number, until: number) {
      if (!(await accountServerIds(db, accountId)).has(serverId)) throw notFound('server');
      if (until <= clock()) throw badRequest('until: must be in the future');
      await setMute(db, { server_id: serverId, account_id: accountId, until });
      return { server_id: serverId, until };
    },

    async unmuteServer(accountId: number, serverId: number) {
      if (!(await deleteMute(db, accountId, serverId))) throw notFound('mute');
    },
  };
}
