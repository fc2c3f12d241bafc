import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readJsonFile, writeFileAtomic } from '../state/state-dir.js';

/** One state file: read with defaults, written whole (temp file + rename, mode 0600). */
export interface StateFile<T> {
  readonly path: string;
  read(): T;
  write(value: T): void;
}

/**
 * The protection state directory (`<state dir>/protection`, mode 0700). Every feature reads and
 * writes its own files through here, so each file is written atomically with mode 0600 and a
 * missing file means the feature's defaults.
 */
export class StateStore {
  constructor(readonly dir: string) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  }

  /** A JSON file; `defaults` stands in while it does not exist. An unreadable file throws with its path. */
  json<T>(name: string, defaults: T): StateFile<T> {
    const path = join(this.dir, name);
    return {
      path,
      read: () => readJsonFile<T>(path) ?? structuredClone(defaults),
      write: (value) => writeFileAtomic(path, JSON.stringify(value)),
    };
  }

  /** A plain text file; null while it does not exist. */
  text(name: string): StateFile<string | null> {
    const path = join(this.dir, name);
    return {
      path,
      read: () => {
        try {
          return readFileSync(path, 'utf8');
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
          throw err;
        }
      },
      write: (value) => writeFileAtomic(path, value ?? ''),
    };
  }

  /** A subdirectory with its own files (feeds/). */
  sub(name: string): StateStore {
    return new StateStore(join(this.dir, name));
  }
}
