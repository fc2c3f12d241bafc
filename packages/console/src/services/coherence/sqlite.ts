import { dataVersion } from '../../db/database.js';
import type { Database } from '../../db/schema.js';

/** `PRAGMA data_version` is read at most this often (ms of monotonic time): it takes the WAL's read lock. */
const VERSION_CHECK_MS = 1;
/**
 * How long after its commit a writer other than the serving console returns: past it, any
 * `data_version` the console still reuses was read after the commit (docs/coherence.md, "SQLite").
 */
export const FOREIGN_WRITE_SETTLES_MS = 2 * VERSION_CHECK_MS;

/**
 * SQLite has one serving console (docs/deploy.md); other connections (the admin CLI) commit to the
 * same file. `data_version` moves whenever another connection commits, never for this one's own
 * writes: `check()` notices it and calls `foreignCommit`.
 */
export function sqliteCommits(db: Database, foreignCommit: () => void) {
  let seen: number | null = null;
  let readAt = Number.NEGATIVE_INFINITY;
  return {
    check() {
      const now = performance.now();
      if (now - readAt < VERSION_CHECK_MS) return;
      readAt = now;
      const version = dataVersion(db);
      if (version !== seen) {
        if (seen !== null) foreignCommit();
        seen = version;
      }
    },

    /**
     * In a writer other than the serving console: returns once `FOREIGN_WRITE_SETTLES_MS` of
     * monotonic time have passed since `committedAt`, checked on the clock rather than trusted to a
     * timer (a timer may fire up to a millisecond early by Node's cached loop time).
     */
    async settled(committedAt: number) {
      for (;;) {
        const left = committedAt + FOREIGN_WRITE_SETTLES_MS - performance.now();
        if (left < 0) return;
        await new Promise((resolve) => setTimeout(resolve, Math.ceil(left) + 1));
      }
    },
  };
}
