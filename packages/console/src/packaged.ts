import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type SQLite from 'better-sqlite3';

/**
 * The console as one executable (a Node single executable application, built by
 * scripts/console-sea.mjs; docs/deploy.md, "The console as one executable"). There its JavaScript is
 * one bundle and `import.meta.url` names the executable, so the files a checkout or the npm tarball
 * reads from disk (the dashboard, the agent install script, package.json) are assets inside it,
 * and the native SQLite addon lies beside it or in ../lib/palisade-console/ (the .deb's layout).
 */
const sea = process.getBuiltinModule('node:sea');

/** Whether this process is the single executable. */
export const IN_EXECUTABLE: boolean = sea.isSea();

/** One asset of the executable (see scripts/console-sea.mjs for their names), or null when absent. */
export function executableAsset(name: string): Buffer | null {
  try {
    return Buffer.from(sea.getRawAsset(name) as ArrayBuffer);
  } catch {
    return null;
  }
}

/** The addon's file name, as better-sqlite3 builds it. */
export const SQLITE_ADDON = 'better_sqlite3.node';

let addon: object | undefined;

/**
 * better-sqlite3's options for this process: none from a checkout or the npm tarball (it finds its
 * own addon); in the executable, whose require() loads built-in modules only, the addon loaded here
 * from the executable's directory, else ../lib/palisade-console/. Both are where the package
 * manager or the operator put the executable, never a path another user can choose.
 */
export function sqliteOptions(): Pick<SQLite.Options, 'nativeBinding'> {
  if (!IN_EXECUTABLE) return {};
  if (addon === undefined) {
    const dir = dirname(process.execPath);
    const candidates = [join(dir, SQLITE_ADDON), join(dir, '../lib/palisade-console', SQLITE_ADDON)];
    const file = candidates.find((f) => existsSync(f));
    if (file === undefined) {
      throw new Error(
        `the SQLite addon is missing: put ${SQLITE_ADDON} (from the release's tar.gz) at ${candidates.join(' or ')}, or set PALISADE_DATABASE_URL to use PostgreSQL`,
      );
    }
    const module = { exports: {} };
    process.dlopen(module, file);
    addon = module.exports;
  }
  // better-sqlite3 takes the loaded addon as well as a path (its lib/database.js); its types say path only.
  return { nativeBinding: addon as unknown as string };
}
