import { createHash, randomBytes } from 'node:crypto';
import type { AlertChannelKind, Database } from '../../db/schema.js';
import { badRequest, conflict, notFound } from '../../errors.js';
import { type GuardedClient, OutboundError } from '../../outbound/guarded-client.js';
import {
  confirmChannel,
  deleteChannel,
  findChannel,
  findChannelByConfirmToken,
  insertChannel,
  listChannels,
  setChannelConfirmToken,
  setChannelLastError,
} from '../../repositories/alerts.repository.js';
import type { SecretBox } from '../../secrets.js';
import type { NotificationsService } from '../notifications.service.js';
import { channelView } from './views.js';

export interface ChannelInput {
  name: string;
  kind: AlertChannelKind;
  url: string | null;
  email: string | null;
}

/** How long the link in a confirmation e-mail works. */
export const CONFIRMATION_TTL_MS = 7 * 24 * 60 * 60_000;

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** Where a confirmation link points: the console's own page for the token (routes/alerts). */
export const confirmationLink = (consoleUrl: string, token: string) =>
  `${consoleUrl.replace(/\/$/, '')}/alerts/confirm?token=${token}`;

function refuseUnconfirmed(channel: { confirmed_at: number | null }) {
  if (channel.confirmed_at === null)
    throw conflict(
      'channel: waiting for confirmation; the recipient must open the link in the confirmation e-mail first (or send it again)',
    );
}

function refuseUnlessWaiting(channel: { kind: AlertChannelKind; confirmed_at: number | null }) {
  if (channel.kind !== 'email') throw conflict('channel: only e-mail channels are confirmed');
  if (channel.confirmed_at !== null) throw conflict('channel: already confirmed');
}

/**
 * Alert channels (docs/alerts.md, "Channels", "E-mail channels"): where notifications go, the
 * confirmation an e-mail channel waits for, and "Send a test".
 */
export function createAlertChannels(deps: {
  db: Database;
  clock: () => number;
  outbound: GuardedClient;
  secrets: SecretBox;
  notifications: Pick<NotificationsService, 'sendConfirmation' | 'sendTest'>;
}) {
  const { db, clock, outbound, secrets, notifications } = deps;

  /**
   * Sends the confirmation mail of an e-mail channel: a fixed text with a single-use link, nothing
   * the account wrote (not the channel's name), stored as its SHA-256. A failed send is kept on the channel.
   */
  async function sendConfirmation(id: number, to: string, consoleUrl: string) {
    const token = randomBytes(32).toString('base64url');
    await setChannelConfirmToken(db, id, sha256(token), clock());
    const error = await notifications.sendConfirmation(to, confirmationLink(consoleUrl, token));
    await setChannelLastError(db, id, error === null ? null : `confirmation e-mail: ${error}`);
  }

  async function requireChannel(accountId: number, id: number) {
    const channel = await findChannel(db, accountId, id);
    if (!channel) throw notFound('channel');
    return channel;
  }

  /** Where a new channel sends (a Slack or Discord URL checked by the target policy, an address) and how it is shown. */
  async function targetOf(input: ChannelInput): Promise<{ target: string | null; hint: string }> {
    if (input.kind === 'slack' || input.kind === 'discord') {
      if (!input.url) throw badRequest(`url: is required for a ${input.kind} channel`);
      try {
        await outbound.checkUrl(input.url);
      } catch (err) {
        if (err instanceof OutboundError) throw badRequest(`url: ${err.message}`);
        throw err;
      }
      return { target: input.url, hint: new URL(input.url).host };
    }
    if (input.kind === 'email') {
      if (!input.email) throw badRequest('email: is required for an email channel');
      return { target: input.email, hint: input.email };
    }
    return { target: null, hint: 'the account webhook' };
  }

  return {
    async listChannels(accountId: number) {
      return (await listChannels(db, accountId)).map(channelView);
    },

    /**
     * Adds a channel; a Slack or Discord URL must pass the console's target policy (docs/fleet.md), as
     * at every delivery. An e-mail channel waits for its recipient: it is sent one confirmation mail
     * (a link to `consoleUrl`) and receives nothing else until the link is opened (docs/alerts.md).
     */
    async createChannel(accountId: number, input: ChannelInput, consoleUrl: string) {
      const { target, hint } = await targetOf(input);
      const now = clock();
      const id = await insertChannel(db, {
        account_id: accountId,
        name: input.name,
        kind: input.kind,
        target_enc: target === null ? null : secrets.seal(target),
        target_hint: hint,
        last_success_at: null,
        last_error: null,
        created_at: now,
        confirmed_at: input.kind === 'email' ? null : now,
        confirm_token_hash: null,
        confirm_sent_at: null,
      });
      if (input.kind === 'email') await sendConfirmation(id, target!, consoleUrl);
      return channelView((await findChannel(db, accountId, id))!);
    },

    /** 404 for another account's channel, 409 while it waits for confirmation: before a test is counted. */
    async requireChannelReady(accountId: number, id: number) {
      refuseUnconfirmed(await requireChannel(accountId, id));
    },

    /** 404 for another account's channel, 409 unless it is an e-mail channel waiting for confirmation. */
    async requireChannelWaiting(accountId: number, id: number) {
      refuseUnlessWaiting(await requireChannel(accountId, id));
    },

    /** A new confirmation mail for an e-mail channel still waiting (the earlier link stops working). */
    async resendConfirmation(accountId: number, id: number, consoleUrl: string) {
      const channel = await requireChannel(accountId, id);
      refuseUnlessWaiting(channel);
      await sendConfirmation(id, secrets.open(channel.target_enc!), consoleUrl);
      return channelView((await findChannel(db, accountId, id))!);
    },

    /** Whether a confirmation token is one waiting to be used: the address it confirms, or null. */
    async confirmationTarget(token: string): Promise<string | null> {
      const channel = await findChannelByConfirmToken(db, sha256(token), clock() - CONFIRMATION_TTL_MS);
      return channel ? channel.target_hint : null;
    },

    /** Uses a confirmation token: the address it confirmed, or a 400 naming `token`. */
    async confirm(token: string): Promise<string> {
      const now = clock();
      const confirmed = await confirmChannel(db, sha256(token), now, now - CONFIRMATION_TTL_MS);
      if (!confirmed) throw badRequest('token: unknown, expired or already used; ask for a new confirmation e-mail');
      return confirmed.target_hint;
    },

    async removeChannel(accountId: number, id: number) {
      if (!(await deleteChannel(db, accountId, id))) throw notFound('channel');
    },

    /** "Send a test": one delivery now, its outcome answered and kept on the channel. */
    async testChannel(accountId: number, id: number) {
      const channel = await requireChannel(accountId, id);
      refuseUnconfirmed(channel);
      const result = await notifications.sendTest(
        accountId,
        {
          id: Number(channel.id),
          kind: channel.kind,
          target_enc: channel.target_enc,
          target_hint: channel.target_hint,
        },
        {
          kind: 'alert.test',
          title: `Palisade test notification for ${channel.name}`,
          body: 'If you can read this, alerts reach this channel.',
          rule_id: null,
          rule: null,
          server_id: null,
          server: null,
          value: null,
          at: clock(),
        },
      );
      return { ...result, channel: channelView((await findChannel(db, accountId, id))!) };
    },
  };
}
