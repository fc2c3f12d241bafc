import { Redis } from 'ioredis';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { openDatabase } from '../src/db/database.js';
import { testDatabase } from './support.js';

/** A serving console (the reader) and a second one on its own connection (the writer), sharing one database. */
export async function twoProcesses(dialect: 'sqlite' | 'postgres', transport: 'database' | 'redis') {
  const database = await testDatabase(dialect);
  const env = {
    PALISADE_DATA_DIR: database.dataDir,
    ...(database.databaseUrl
      ? { PALISADE_DATABASE_URL: database.databaseUrl, PALISADE_DATABASE_SCHEMA: database.databaseSchema! }
      : {}),
    ...(transport === 'redis'
      ? {
          PALISADE_REDIS_URL: process.env.PALISADE_TEST_REDIS_URL!,
          PALISADE_REDIS_PREFIX: `palisade-test-${process.pid}-${Date.now()}`,
        }
      : {}),
  };
  const config = loadConfig(env);
  const redis = transport === 'redis' ? [new Redis(config.redisUrl!), new Redis(config.redisUrl!)] : [];
  // The reader: a serving console. The writer: another console on its own connection, as a
  // second process (PostgreSQL) or the admin CLI (SQLite) would be.
  const reader = await buildApp({ config, db: database.db, redis: redis[0] ?? null });
  const writerDb = await openDatabase(config);
  const writer = await buildApp({ config, db: writerDb.db, redis: redis[1] ?? null });
  return {
    database,
    config,
    reader,
    writer,
    async close() {
      await writer.close();
      await writerDb.close();
      await reader.close();
      for (const r of redis) r.disconnect();
      await database.close();
    },
  };
}
