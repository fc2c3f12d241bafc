import type { CheckinBan } from '@palisade/protocol/checkin';

/** Bans kept while the console has not received them; the oldest go first when there are more. */
export const BAN_OUTBOX_MAX = 2000;
/** Bans per check-in: MAX_CHECKIN_BANS in packages/protocol/src/checkin.ts (a type-only import here, so no zod). */
export const BANS_PER_CHECKIN = 200;

/**
 * The agent's own bans waiting for a check-in that arrives (docs/protection.md, "Fleet policies"):
 * each is sent until one check-in carrying it is answered 2xx, then dropped, so the console hears of
 * each ban once however often the console was down.
 */
export function createBanOutbox(max = BAN_OUTBOX_MAX) {
  const queue: CheckinBan[] = [];
  return {
    push(ban: CheckinBan) {
      queue.push(ban);
      if (queue.length > max) queue.splice(0, queue.length - max);
    },
    /** The bans the next check-in carries. */
    next(): CheckinBan[] {
      return queue.slice(0, BANS_PER_CHECKIN);
    },
    /** The console received these. */
    delivered(sent: readonly CheckinBan[]) {
      for (const ban of sent) {
        const at = queue.indexOf(ban);
        if (at >= 0) queue.splice(at, 1);
      }
    },
    get size() {
      return queue.length;
    },
  };
}

export type BanOutbox = ReturnType<typeof createBanOutbox>;
