import { type Migration, sql } from 'kysely';
import { type AnyDb, type Dialect, withId } from './helpers.js';

/**
 * Agent updates staged in waves (docs/fleet.md, "Agent updates"): a rollout of one agent version to
 * an account's servers (or those with one tag), and each server's place in it. At most one rollout
 * runs per account (a partial unique index): the check-in path finds it with one indexed lookup, and
 * a server's row in it with another.
 */
export function agentRollouts(dialect: Dialect): Migration {
  return {
    async up(db: AnyDb) {
      await withId(dialect, db.schema.createTable('agent_rollouts'))
        .addColumn('account_id', 'bigint', (c) => c.notNull())
        .addColumn('version', 'text', (c) => c.notNull())
        .addColumn('tag', 'text')
        .addColumn('waves', 'text', (c) => c.notNull())
        .addColumn('health_timeout_s', 'integer', (c) => c.notNull())
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('current_wave', 'integer', (c) => c.notNull())
        .addColumn('reason', 'text')
        .addColumn('created_by', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('finished_at', 'bigint')
        .execute();
      await db.schema
        .createIndex('agent_rollouts_running')
        .on('agent_rollouts')
        .column('account_id')
        .unique()
        .where(sql.ref('state'), '=', 'running')
        .execute();
      await db.schema
        .createIndex('agent_rollouts_account')
        .on('agent_rollouts')
        .columns(['account_id', 'id'])
        .execute();
      await db.schema
        .createTable('agent_rollout_servers')
        .addColumn('rollout_id', 'bigint', (c) => c.notNull())
        .addColumn('server_id', 'bigint', (c) => c.notNull())
        .addColumn('wave', 'integer', (c) => c.notNull())
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('from_version', 'text')
        .addColumn('reason', 'text')
        .addColumn('offered_at', 'bigint')
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('agent_rollout_servers_pk', ['rollout_id', 'server_id'])
        .execute();
      await db.schema
        .createIndex('agent_rollout_servers_wave')
        .on('agent_rollout_servers')
        .columns(['rollout_id', 'wave', 'state'])
        .execute();
    },
  };
}
