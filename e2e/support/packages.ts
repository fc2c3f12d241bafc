import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
/** Where scripts/package.mjs writes the artifacts. */
export const PACKAGES_DIR = join(ROOT, 'dist/packages');
/** The hash of what the artifacts in PACKAGES_DIR were built from (written after a successful run). */
const STAMP = join(PACKAGES_DIR, '.inputs-sha256');

/** Everything scripts/package.mjs reads: the script, the manifests, the built code, packaging files, Node itself. */
const INPUTS = [
  'scripts/package.mjs',
  'scripts/debian.mjs',
  'scripts/sea.mjs',
  'scripts/console-sea.mjs',
  'packages/console/packaging',
  'docs/deploy.md',
  'docs/console.md',
  'package.json',
  'package-lock.json',
  'docs/agent.md',
  'packages/agent/packaging',
  'packages/agent/examples',
  'packages/console/install',
  'packages/web/dist',
  ...['protocol', 'agent', 'console', 'sdk'].flatMap((p) => [
    `packages/${p}/package.json`,
    `packages/${p}/dist/src`,
    `packages/${p}/bin`,
  ]),
];

function addTree(hash: ReturnType<typeof createHash>, path: string) {
  if (!existsSync(path)) return;
  if (statSync(path).isDirectory()) {
    for (const name of readdirSync(path).sort()) addTree(hash, join(path, name));
    return;
  }
  hash.update(`${relative(ROOT, path)}\0`);
  hash.update(readFileSync(path));
}

function inputsHash(): string {
  const hash = createHash('sha256');
  hash.update(`${process.execPath}\0${process.version}\0`);
  for (const input of INPUTS) addTree(hash, join(ROOT, input));
  return hash.digest('hex');
}

/**
 * The artifacts of `npm run package`, built at most once per change of what they are built from:
 * e2e/packaging.test.ts and e2e/install.test.ts both need them, and the run costs a minute. Call it
 * while holding holdDpkgLock(), which the two suites take anyway, so one builds and the other reuses.
 */
export function packagedArtifacts(): string {
  const inputs = inputsHash();
  if (existsSync(STAMP) && readFileSync(STAMP, 'utf8') === inputs) return PACKAGES_DIR;
  const res = spawnSync(process.execPath, [join(ROOT, 'scripts/package.mjs')], { encoding: 'utf8' });
  if (res.status !== 0) throw new Error(`scripts/package.mjs failed:\n${res.stdout}${res.stderr}`);
  writeFileSync(STAMP, inputs);
  return PACKAGES_DIR;
}
