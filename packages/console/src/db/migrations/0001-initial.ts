import type { Migration } from 'kysely';
import { type AnyDb, type Dialect, withId } from './helpers.js';

export function initial(dialect: Dialect): Migration {
  return {
    async up(db: AnyDb) {
      await withId(dialect, db.schema.createTable('accounts'))
        .addColumn('email', 'text', (c) => c.notNull().unique())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('password_hash', 'text', (c) => c.notNull())
        .addColumn('role', 'text', (c) => c.notNull())
        .addColumn('permissions', 'text', (c) => c.notNull())
        .addColumn('disabled_at', 'bigint')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('sessions')
        .addColumn('id_hash', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'bigint', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('sessions_account').on('sessions').column('account_id').execute();

      await withId(dialect, db.schema.createTable('access_tokens'))
        .addColumn('account_id', 'bigint', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('token_hash', 'text', (c) => c.notNull().unique())
        .addColumn('last4', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('last_used_at', 'bigint')
        .execute();
      await db.schema.createIndex('access_tokens_account').on('access_tokens').column('account_id').execute();

      await withId(dialect, db.schema.createTable('catalog_items'))
        .addColumn('sku', 'text', (c) => c.notNull().unique())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('description', 'text', (c) => c.notNull())
        .addColumn('price_cents', 'bigint', (c) => c.notNull())
        .addColumn('currency', 'text', (c) => c.notNull())
        .addColumn('interval', 'text', (c) => c.notNull())
        .addColumn('server_limit', 'integer', (c) => c.notNull())
        .addColumn('features', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();

      await withId(dialect, db.schema.createTable('products'))
        .addColumn('account_id', 'bigint', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('catalog_id', 'bigint', (c) => c.notNull().references('catalog_items.id'))
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('products_account').on('products').column('account_id').execute();

      await withId(dialect, db.schema.createTable('servers'))
        .addColumn('account_id', 'bigint', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('product_id', 'bigint', (c) => c.notNull().references('products.id'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('api_url', 'text', (c) => c.notNull())
        .addColumn('api_key_enc', 'text', (c) => c.notNull())
        .addColumn('hostname', 'text')
        .addColumn('public_ip', 'text')
        .addColumn('facts', 'text', (c) => c.notNull())
        .addColumn('agent_version', 'text')
        .addColumn('daemon_token_hash', 'text', (c) => c.unique())
        .addColumn('last_seen', 'bigint')
        .addColumn('latest_sample', 'text')
        .addColumn('score_base', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('servers_account').on('servers').column('account_id').execute();

      await withId(dialect, db.schema.createTable('samples'))
        .addColumn('server_id', 'bigint', (c) => c.notNull().references('servers.id').onDelete('cascade'))
        .addColumn('ts', 'bigint', (c) => c.notNull())
        .addColumn('resolution', 'text', (c) => c.notNull())
        .addColumn('cpu_pct', 'real', (c) => c.notNull())
        .addColumn('mem_used_mb', 'real', (c) => c.notNull())
        .addColumn('mem_total_mb', 'real', (c) => c.notNull())
        .addColumn('disk_used_pct', 'real', (c) => c.notNull())
        .addColumn('load1', 'real', (c) => c.notNull())
        .addColumn('rx_bps', 'real', (c) => c.notNull())
        .addColumn('tx_bps', 'real', (c) => c.notNull())
        .addColumn('extra', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('samples_server_ts')
        .on('samples')
        .columns(['server_id', 'resolution', 'ts'])
        .execute();

      await withId(dialect, db.schema.createTable('benchmark_runs'))
        .addColumn('server_id', 'bigint', (c) => c.notNull().references('servers.id').onDelete('cascade'))
        .addColumn('label', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('token_hash', 'text', (c) => c.notNull().unique())
        .addColumn('log', 'text', (c) => c.notNull())
        .addColumn('score_cpu', 'real')
        .addColumn('score_disk', 'real')
        .addColumn('score_network', 'real')
        .addColumn('score_stability', 'real')
        .addColumn('score_total', 'real')
        .addColumn('verified', 'integer', (c) => c.notNull())
        .addColumn('checks', 'text', (c) => c.notNull())
        .addColumn('hardware', 'text', (c) => c.notNull())
        .addColumn('error', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('started_at', 'bigint')
        .addColumn('finished_at', 'bigint')
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('benchmark_runs_server')
        .on('benchmark_runs')
        .columns(['server_id', 'status'])
        .execute();
    },
  };
}
