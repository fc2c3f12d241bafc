import type { Migration } from 'kysely';
import type { AnyDb } from './helpers.js';

/** Agent TLS pinning, the stored sum of the sample-based score, and the index the sample rollups sweep by. */
export const fleet: Migration = {
  async up(db: AnyDb) {
    await db.schema.alterTable('servers').addColumn('tls_fingerprint', 'text').execute();
    await db.schema.alterTable('servers').addColumn('score_base_total', 'integer').execute();
    await db.schema.createIndex('samples_resolution_ts').on('samples').columns(['resolution', 'ts']).execute();
  },
};
