// One Node single executable (SEA) from a CommonJS main script and its assets, the same way for the
// agent and the console (scripts/package.mjs, scripts/console-sea.mjs; docs/decisions.md, "Packaging").
import { chmodSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const require = createRequire(import.meta.url);

/**
 * Writes `exe`: this Node's binary, stripped, with the blob of `stage/<main>` and `assets` (name →
 * path under `stage`) injected; fails unless `exe --version` prints `version`.
 * @param {{ stage: string, main: string, assets: Record<string, string>, exe: string, version: string,
 *   what: string, run: (cmd: string, args: string[], opts?: object) => Buffer, fail: (message: string) => never }} o
 */
export function singleExecutable({ stage, main, assets, exe, version, what, run, fail }) {
  const seaConfig = join(stage, 'sea-config.json');
  // Paths relative to the staging directory: the blob records the main script's path.
  writeFileSync(
    seaConfig,
    JSON.stringify({ main, output: 'sea-prep.blob', disableExperimentalSEAWarning: true, useCodeCache: true, assets }),
  );
  // The code cache holds V8's hashes of the script's strings, seeded at random in each process, so
  // two builds differ. A fixed --random-seed fixes that seed; V8 leaves this flag out of the flag hash
  // it checks the cache against, so the executable (random seed) still accepts the cache, where
  // --hash-seed would have it rejected ("Code cache data rejected").
  run(process.execPath, ['--random-seed=1', '--experimental-sea-config', seaConfig], { cwd: stage });
  // Node's binary as shipped carries its symbol table and debug information (13 MB). Stripped the way
  // dh_strip strips an executable, before the blob goes in: stripping after postject breaks the
  // executable (it crashes at start).
  run('strip', ['--remove-section=.comment', '--remove-section=.note', '-o', exe, process.execPath]);
  chmodSync(exe, 0o755);
  // postject's CLI (its LIEF part warns about Node's .note sections, harmlessly); its output is shown on failure only.
  try {
    run(
      process.execPath,
      [
        require.resolve('postject/dist/cli.js'),
        exe,
        'NODE_SEA_BLOB',
        join(stage, 'sea-prep.blob'),
        '--sentinel-fuse',
        'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2',
      ],
      { stdio: 'pipe' },
    );
  } catch (err) {
    fail(`postject failed on ${what}:\n${err.stdout}${err.stderr}`);
  }
  const said = run(exe, ['--version'], { env: { PATH: '/usr/bin:/bin' } })
    .toString()
    .trim();
  if (said !== version) fail(`${what} says version "${said}", expected ${version}`);
}
