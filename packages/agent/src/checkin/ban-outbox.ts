import type { CheckinBan } from '@palisade/protocol/checkin';
import { CONTROL_CHARACTERS } from '../lib/text.js';

/** Bans kept while the console has not received them; the oldest go first when there are more. */
export const BAN_OUTBOX_MAX = 2000;
/** Bans per check-in: MAX_CHECKIN_BANS in packages/protocol/src/checkin.ts (a type-only import here, so no zod). */
export const BANS_PER_CHECKIN = 200;

/** A kind is a short word (`conn_flood`, `log_pattern`); a pattern name follows PATTERN_NAME. */
const KIND = /^[a-z0-9_.-]{1,40}$/;
const PATTERN = /^[A-Za-z0-9_.-]{1,64}$/;

function reportable(ban: CheckinBan): boolean {
  if (!KIND.test(ban.kind) || CONTROL_CHARACTERS.test(ban.ip)) return false;
  return ban.pattern === null || PATTERN.test(ban.pattern);
}

/**
 * The agent's own bans waiting for a check-in that arrives (docs/protection.md, "Fleet policies"):
 * each is sent until one check-in carrying it is answered 2xx, then dropped, so the console hears of
 * each ban once however often the console was down.
 */
export function createBanOutbox(max = BAN_OUTBOX_MAX) {
  const queue: CheckinBan[] = [];
  let skipped = 0;
  return {
    push(ban: CheckinBan) {
      // Never report a kind or pattern name holding control characters (or a kind the console's
      // schema refuses): it would flow into other agents' notes (docs/security.md).
      if (!reportable(ban)) {
        skipped++;
        return;
      }
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
    /** Bans never reported because their kind or pattern name is not plain text. */
    get skipped() {
      return skipped;
    },
  };
}

export type BanOutbox = ReturnType<typeof createBanOutbox>;
