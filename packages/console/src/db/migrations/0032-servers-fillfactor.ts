import { type Migration, sql } from 'kysely';
import type { AnyDb, Dialect } from './helpers.js';

/**
 * PostgreSQL: `servers` pages filled to 40 %, so a check-in's new version of a server's row (about
 * 900 bytes, one a check-in) fits on the page it is on and the update is HOT: no new index entries,
 * and the dead version is pruned in place. With full pages a third of the updates were not, each
 * adding three index entries and leaving dead rows the token lookup and the row lock wade through
 * until a vacuum (docs/performance.md, "One statement a group on PostgreSQL": 113 → 78 µs of
 * PostgreSQL a check-in when tried by hand). It applies to pages written from now on; `VACUUM FULL
 * servers` applies it at once (docs/deploy.md). Additive: a storage setting, nothing a query sees,
 * and the lock it takes lets reads and writes go on. SQLite has no such setting.
 */
export const serversFillfactor = (dialect: Dialect): Migration => ({
  async up(db: AnyDb) {
    if (dialect === 'postgres') await sql`ALTER TABLE servers SET (fillfactor = 40)`.execute(db);
  },
});
