import { randomBytes } from 'node:crypto';
import {
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { RENAMED_MIGRATIONS } from '../db/migrations/index.js';
import { sqliteOptions } from '../packaged.js';

const DATABASE = 'console.db';

/** An online copy of the console's SQLite file (better-sqlite3's backup API) and the migrations applied to it. */
export async function copySqlite(dataDir: string): Promise<{ bytes: Buffer; migrations: string[] }> {
  const source = join(dataDir, DATABASE);
  if (!existsSync(source)) throw new Error(`no console database at ${source}`);
  const scratch = mkdtempSync(join(tmpdir(), 'palisade-backup-')); // mode 0700: the copy holds secrets too
  try {
    const copy = join(scratch, DATABASE);
    const db = new SQLite(source, { fileMustExist: true, ...sqliteOptions() });
    try {
      db.pragma('busy_timeout = 5000');
      await db.backup(copy);
    } finally {
      db.close();
    }
    return { bytes: readFileSync(copy), migrations: migrationsOf(copy) };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

function migrationsOf(file: string): string[] {
  const db = new SQLite(file, { readonly: true, fileMustExist: true, ...sqliteOptions() });
  try {
    return db.prepare('SELECT name FROM kysely_migration ORDER BY name').pluck().all() as string[];
  } finally {
    db.close();
  }
}

/** Where a restore would write; refused when the data directory already holds a database. */
export function refuseUsedDataDir(dataDir: string) {
  for (const name of [DATABASE, `${DATABASE}-wal`]) {
    if (existsSync(join(dataDir, name)))
      throw new Error(
        `the data directory ${dataDir} already holds a console database (${name}); restore only into an empty one`,
      );
  }
}

/**
 * Writes the database file under a temporary name, checks SQLite reads it and finds the backup's
 * migrations there, then returns a step that moves it into place.
 */
export function stageSqlite(dataDir: string, bytes: Buffer, migrations: string[]): { commit(): void; abandon(): void } {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const temp = join(dataDir, `.${DATABASE}.${randomBytes(6).toString('hex')}.restoring`);
  const fd = openSync(temp, 'wx', 0o600);
  const abandon = () => rmSync(temp, { force: true });
  try {
    let done = 0;
    while (done < bytes.length) done += writeSync(fd, bytes, done);
    fsyncSync(fd);
    closeSync(fd);
    const db = new SQLite(temp, { fileMustExist: true, ...sqliteOptions() });
    try {
      const check = db.pragma('quick_check', { simple: true });
      if (check !== 'ok') throw new Error(`the database in the backup is damaged: ${String(check)}`);
      const found = (db.prepare('SELECT name FROM kysely_migration').pluck().all() as string[])
        .map((m) => RENAMED_MIGRATIONS[m] ?? m)
        .sort();
      if (found.join() !== migrations.join()) throw new Error('the database in the backup does not match its header');
      db.pragma('journal_mode = DELETE'); // one file, no -wal beside the temporary name
    } finally {
      db.close();
    }
  } catch (err) {
    try {
      closeSync(fd);
    } catch {
      // closed above
    }
    abandon();
    throw err;
  }
  return {
    commit: () => {
      refuseUsedDataDir(dataDir);
      renameSync(temp, join(dataDir, DATABASE));
    },
    abandon: () => {
      try {
        unlinkSync(temp);
      } catch {
        // already moved
      }
    },
  };
}
