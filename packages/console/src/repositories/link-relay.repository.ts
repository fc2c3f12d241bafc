import { sql } from 'kysely';
import type { Database } from '../db/schema.js';

/**
 * Outbound links across console processes on PostgreSQL without Redis (migration 0019;
 * services/servers/relay-buses.ts): which process holds each server's link, and relayed messages
 * too long for a NOTIFY payload.
 */

/** The process holding the server's link, unless its claim expired. */
export async function findLinkHolder(db: Database, serverId: number, now: number): Promise<string | null> {
  const row = await db
    .selectFrom('link_holders')
    .select('process')
    .where('server_id', '=', serverId)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return row?.process ?? null;
}

/** The process holds the server's link from now on, whoever held it before (the newest link wins). */
export async function claimLink(db: Database, serverId: number, process: string, expiresAt: number) {
  await db
    .insertInto('link_holders')
    .values({ server_id: serverId, process, expires_at: expiresAt })
    .onConflict((oc) => oc.column('server_id').doUpdateSet({ process, expires_at: expiresAt }))
    .execute();
}

/** Every claim of the process lasts until `expiresAt`: one statement, whatever their number. */
export async function renewLinks(db: Database, process: string, expiresAt: number) {
  await db.updateTable('link_holders').set({ expires_at: expiresAt }).where('process', '=', process).execute();
}

/** The process no longer holds the link; a newer claim by another process stays. */
export async function releaseLink(db: Database, serverId: number, process: string) {
  await db.deleteFrom('link_holders').where('server_id', '=', serverId).where('process', '=', process).execute();
}

/** Claims that expired before `holdersBefore` and messages written before `messagesBefore`, nobody's now. */
export async function purgeLinkRelay(db: Database, holdersBefore: number, messagesBefore: number) {
  await db.deleteFrom('link_holders').where('expires_at', '<', holdersBefore).execute();
  await db.deleteFrom('link_relay_messages').where('created_at', '<', messagesBefore).execute();
}

/** Stores a long message; its id goes in the NOTIFY instead. */
export async function insertRelayMessage(db: Database, body: string, now: number): Promise<number> {
  const row = await db
    .insertInto('link_relay_messages')
    .values({ body, created_at: now })
    .returning('id')
    .executeTakeFirstOrThrow();
  return Number(row.id);
}

/** Reads a long message and removes it in one statement; null when it is gone. */
export async function takeRelayMessage(db: Database, id: number): Promise<string | null> {
  const row = await db.deleteFrom('link_relay_messages').where('id', '=', id).returning('body').executeTakeFirst();
  return row?.body ?? null;
}

/** `NOTIFY` on a channel, with the payload as a bound parameter (PostgreSQL only). */
export async function notify(db: Database, channel: string, payload: string) {
  await sql`SELECT pg_notify(${channel}, ${payload})`.execute(db);
}
