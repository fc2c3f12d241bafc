import { CONSOLE_VERSION, type ConsoleConfig } from '../config.js';
import { openDatabase } from '../db/database.js';
import { type Dialect, migrationProvider, RENAMED_MIGRATIONS } from '../db/migrations/index.js';
import { readSecretKeyFile, secretKeyFile, writeSecretKeyFile } from '../secrets.js';
import { ArchiveWriter, type BackupHeader, readArchive } from './archive.js';
import { dumpPostgres, emptySchema, loadPostgres, parseRows, refuseUsedSchema } from './postgres.js';
import { copySqlite, refuseUsedDataDir, stageSqlite } from './sqlite.js';

type Settings = Pick<ConsoleConfig, 'dataDir' | 'databaseUrl' | 'databaseSchema' | 'secretKey'>;

const dialectOf = (config: Settings): Dialect => (config.databaseUrl ? 'postgres' : 'sqlite');

/** Writes the database and the secret key to `file` (a secret itself: mode 0600). Answers what it wrote. */
export async function backup(config: Settings, file: string, force: boolean): Promise<string> {
  const dialect = dialectOf(config);
  const header = (migrations: string[]): BackupHeader => ({
    dialect,
    console_version: CONSOLE_VERSION,
    created_at: new Date().toISOString(),
    migrations,
    secret_key: '',
  });
  let archive: ArchiveWriter;
  let migrations: string[];
  if (dialect === 'sqlite') {
    const copy = await copySqlite(config.dataDir);
    migrations = copy.migrations;
    const key = secretKeyOf(config);
    archive = new ArchiveWriter(file, force, { ...header(migrations), secret_key: key });
    try {
      archive.write(copy.bytes);
    } catch (err) {
      archive.abandon();
      throw err;
    }
  } else {
    const key = secretKeyOf(config);
    migrations = [];
    archive = await dumpPostgres(config.databaseUrl!, config.databaseSchema ?? 'public', (applied) => {
      migrations = applied;
      return new ArchiveWriter(file, force, { ...header(applied), secret_key: key });
    });
  }
  archive.finish();
  return `Backup of the ${dialect} database (schema version ${migrations.at(-1)}) and the secret key written to ${file}.`;
}

/** The key the console encrypts with; never a new one (that would decrypt nothing). */
function secretKeyOf(config: Settings): string {
  const key = config.secretKey ?? readSecretKeyFile(config.dataDir);
  if (!key)
    throw new Error(
      `no secret key: neither PALISADE_SECRET_KEY nor ${secretKeyFile(config.dataDir)}; run the backup with the console's settings`,
    );
  return key.toString('hex');
}

/** Restores `file` into an empty data directory or PostgreSQL schema, then migrates it to this console's version. */
export async function restore(config: Settings, file: string): Promise<string> {
  const { header, body } = readArchive(file);
  header.migrations = header.migrations.map((m) => RENAMED_MIGRATIONS[m] ?? m).sort();
  const dialect = dialectOf(config);
  if (header.dialect !== dialect)
    throw new Error(`${file} is a backup of a ${header.dialect} console; this console is configured for ${dialect}`);
  const known = Object.keys(await migrationProvider(dialect).getMigrations()).sort();
  const unknown = header.migrations.filter((m) => !known.includes(m));
  if (unknown.length > 0)
    throw new Error(
      `${file} comes from a newer console (schema version ${unknown.at(-1)}, unknown here); restore it with that version or later`,
    );
  if (header.migrations.some((m, i) => known[i] !== m))
    throw new Error(`${file} has migrations this console applies in another order: ${header.migrations.join(', ')}`);
  const writesKey = refuseOtherKey(config, header.secret_key);
  const upTo = header.migrations.at(-1)!;
  const settings = { dataDir: config.dataDir, databaseUrl: config.databaseUrl, databaseSchema: config.databaseSchema };
  if (dialect === 'sqlite') {
    refuseUsedDataDir(config.dataDir);
    const staged = stageSqlite(config.dataDir, body, header.migrations);
    try {
      if (writesKey) writeSecretKeyFile(config.dataDir, Buffer.from(header.secret_key, 'hex'));
      staged.commit();
    } catch (err) {
      staged.abandon();
      throw err;
    }
  } else {
    const url = config.databaseUrl!;
    const schema = config.databaseSchema ?? 'public';
    const rows = parseRows(body, file);
    const existed = await refuseUsedSchema(url, schema);
    try {
      await (await openDatabase(settings, { upTo })).close();
      await loadPostgres(url, schema, rows);
    } catch (err) {
      await emptySchema(url, schema, existed);
      throw err;
    }
    if (writesKey) writeSecretKeyFile(config.dataDir, Buffer.from(header.secret_key, 'hex'));
  }
  await (await openDatabase(settings)).close();
  const forward = known.length - header.migrations.length;
  return `Restored ${file} (${dialect}, schema version ${upTo}${forward > 0 ? `, migrated forward ${forward} step(s) to ${known.at(-1)}` : ''}).`;
}

/**
 * The key the restored console will use must be the backup's: a different PALISADE_SECRET_KEY or
 * secret.key would leave every encrypted column unreadable. Answers whether secret.key is to be written.
 */
function refuseOtherKey(config: Settings, key: string): boolean {
  if (config.secretKey) {
    if (config.secretKey.toString('hex') !== key)
      throw new Error(
        'PALISADE_SECRET_KEY is not the key of this backup; unset it (the backup brings its own) or set it to that key',
      );
    return false;
  }
  const existing = readSecretKeyFile(config.dataDir);
  if (!existing) return true;
  if (existing.toString('hex') !== key)
    throw new Error(
      `${secretKeyFile(config.dataDir)} holds another secret key; restore only into an empty data directory`,
    );
  return false;
}
