// A build step that is skipped when its inputs are unchanged: `npm start` and `npm test` run the
// whole build, and `tsc -b` is incremental by itself, but the protocol bundle and the dashboard
// would otherwise be rebuilt each time (docs/decisions.md, "Workspace and build").
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';

export const root = new URL('..', import.meta.url).pathname;

/** Every file under the given files and folders, sorted, so the digest does not depend on order. */
function filesOf(paths) {
  const files = [];
  const walk = (path) => {
    if (!existsSync(path)) return;
    if (!statSync(path).isDirectory()) {
      files.push(path);
      return;
    }
    for (const entry of readdirSync(path)) walk(join(path, entry));
  };
  for (const path of paths) walk(join(root, path));
  return files.sort();
}

/** The SHA-256 of the inputs' names and contents (contents, not times: a fresh clone or a `tsc -b` that rewrites a file unchanged must not force a rebuild). */
function digestOf(paths) {
  const hash = createHash('sha256');
  for (const file of filesOf(paths)) {
    hash.update(relative(root, file)).update('\0').update(readFileSync(file)).update('\0');
  }
  return hash.digest('hex');
}

/**
 * Runs `build` unless the stamp file records the same digest of `inputs` and every one of
 * `outputs` exists; then writes the stamp. PALISADE_FULL_BUILD=1 runs it regardless.
 * @param {{ name: string, inputs: string[], outputs: string[], stamp: string, build: () => unknown }} step
 */
export async function buildIfChanged({ name, inputs, outputs, stamp, build }) {
  const digest = digestOf(inputs);
  const stampPath = join(root, stamp);
  const built = existsSync(stampPath) ? readFileSync(stampPath, 'utf8').trim() : '';
  const outputsThere = outputs.every((output) => existsSync(join(root, output)));
  if (process.env.PALISADE_FULL_BUILD !== '1' && built === digest && outputsThere) {
    console.log(`${name}: inputs unchanged since the last build, skipped`);
    return;
  }
  await build();
  writeFileSync(stampPath, `${digest}\n`);
}
