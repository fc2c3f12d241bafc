import { createHash, randomBytes } from 'node:crypto';
import {
  closeSync,
  fsyncSync,
  linkSync,
  lstatSync,
  openSync,
  readFileSync,
  renameSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { Dialect } from '../db/migrations/index.js';

/**
 * A backup archive: one file, written by Node alone.
 *
 *   palisade-backup 1\n
 *   {header JSON: dialect, migrations, secret key, …}\n
 *   body: the SQLite database file, or PostgreSQL rows (a `#table` line, then one JSON object a line)
 *   \npalisade-backup-end <SHA-256 of every byte before this line>\n
 *
 * The trailer comes last, so a file cut short or changed anywhere is refused before anything is restored.
 */
const MAGIC = 'palisade-backup 1\n';
const END = '\npalisade-backup-end ';
const TRAILER_LENGTH = END.length + 64 + 1;

export interface BackupHeader {
  dialect: Dialect;
  console_version: string;
  created_at: string;
  /** The migrations applied to the database backed up, in order: its schema version. */
  migrations: string[];
  /** The console's secret key (hex): encrypted columns only decrypt with it. */
  secret_key: string;
}

/** Writes an archive next to `file` and puts it in place only once complete: mode 0600, never through a symlink. */
export class ArchiveWriter {
  private readonly hash = createHash('sha256');
  private readonly temp: string;
  private readonly fd: number;

  constructor(
    private readonly file: string,
    private readonly force: boolean,
    header: BackupHeader,
  ) {
    refuseExisting(file, force);
    this.temp = join(dirname(file), `.${basename(file)}.${randomBytes(6).toString('hex')}.partial`);
    // O_EXCL: a symlink (or anything) already at the temporary name is refused, never followed.
    this.fd = openSync(this.temp, 'wx', 0o600);
    this.write(MAGIC);
    this.write(`${JSON.stringify(header)}\n`);
  }

  write(chunk: string | Buffer) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    this.hash.update(buffer);
    let done = 0;
    while (done < buffer.length) done += writeSync(this.fd, buffer, done);
  }

  /** Seals the archive and moves it to `file`: without --force, a file that appeared meanwhile is kept. */
  finish() {
    const digest = this.hash.copy().update(END).digest('hex');
    this.write(`${END}${digest}\n`);
    fsyncSync(this.fd);
    closeSync(this.fd);
    try {
      if (this.force) renameSync(this.temp, this.file);
      else {
        try {
          linkSync(this.temp, this.file); // fails when anything, a symlink too, is already at the name
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === 'EEXIST') refuseExisting(this.file, false);
          throw err;
        }
        unlinkSync(this.temp);
      }
    } catch (err) {
      this.abandon();
      throw err;
    }
  }

  abandon() {
    try {
      closeSync(this.fd);
    } catch {
      // already closed by finish()
    }
    try {
      unlinkSync(this.temp);
    } catch {
      // already moved or removed
    }
  }
}

function refuseExisting(file: string, force: boolean) {
  let exists = true;
  try {
    lstatSync(file);
  } catch {
    exists = false;
  }
  if (exists && !force) throw new Error(`${file} already exists; pass --force to replace it`);
}

export interface Archive {
  header: BackupHeader;
  body: Buffer;
}

/** Reads and checks a whole archive; any damage is one error naming the file, before anything is restored. */
export function readArchive(file: string): Archive {
  const bytes = readFileSync(file);
  const damaged = (why: string) => new Error(`${file} is not a complete Palisade backup (${why})`);
  if (bytes.subarray(0, MAGIC.length).toString('latin1') !== MAGIC) throw damaged('it does not start as one');
  if (bytes.length < MAGIC.length + TRAILER_LENGTH) throw damaged('cut short');
  const trailerAt = bytes.length - TRAILER_LENGTH;
  const trailer = bytes.subarray(trailerAt).toString('latin1');
  const match = /^\npalisade-backup-end ([0-9a-f]{64})\n$/.exec(trailer);
  if (!match) throw damaged('cut short: its end mark is missing');
  const digest = createHash('sha256').update(bytes.subarray(0, trailerAt)).update(END).digest('hex');
  if (digest !== match[1]) throw damaged('its checksum does not match: the file was changed or damaged');
  const headerEnd = bytes.indexOf(0x0a, MAGIC.length);
  if (headerEnd < 0 || headerEnd > trailerAt) throw damaged('no header');
  let header: BackupHeader;
  try {
    header = JSON.parse(bytes.subarray(MAGIC.length, headerEnd).toString('utf8')) as BackupHeader;
  } catch {
    throw damaged('its header is not JSON');
  }
  if (
    (header.dialect !== 'sqlite' && header.dialect !== 'postgres') ||
    !Array.isArray(header.migrations) ||
    header.migrations.length === 0 ||
    !header.migrations.every((m) => typeof m === 'string') ||
    typeof header.secret_key !== 'string' ||
    !/^[0-9a-f]{64}$/.test(header.secret_key)
  ) {
    throw damaged('its header lacks the dialect, migrations or secret key');
  }
  return { header, body: bytes.subarray(headerEnd + 1, trailerAt) };
}
