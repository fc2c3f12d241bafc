#!/usr/bin/env node
// Runs every compiled test file (packages/*/dist/test, e2e/dist) with Node's test runner.
// `npm test -- console` narrows to files whose path contains one of the given words.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join, relative } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const filters = process.argv.slice(2).filter((a) => !a.startsWith('-'));

function collect(dir, out) {
  if (!existsSync(dir)) return out;
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) collect(path, out);
    else if (name.endsWith('.test.js')) out.push(path);
  }
  return out;
}

// End-to-end files first: they are the longest, and started last they would finish alone.
const roots = [
  join(root, 'e2e', 'dist'),
  ...readdirSync(join(root, 'packages')).map((p) => join(root, 'packages', p, 'dist', 'test')),
];
const files = roots
  .flatMap((dir) => collect(dir, []))
  .filter((f) => filters.length === 0 || filters.some((w) => relative(root, f).includes(w)));

if (files.length === 0) {
  console.error('No test files found. Run `npm run build` first, or check the filter words.');
  process.exit(1);
}
// Files side by side: most of a file's time is spent waiting on real processes, timers and the
// browser, not on a core (docs/decisions.md, "Test run time"). PALISADE_TEST_CONCURRENCY overrides.
// A file's time limit (15 min) includes waiting for the dpkg lock the packaging suites share.
const concurrency = Number(process.env.PALISADE_TEST_CONCURRENCY) || Math.max(4, 2 * availableParallelism());
console.log(
  `Running ${files.length} test files, ${concurrency} at a time${process.env.CI ? ' (CI: a skipped suite fails the run)' : ''}`,
);
// One Chromium for every browser test file (e2e/support/chromium.ts), instead of one each.
const browserFiles = files.some((f) => f.includes(join('e2e', 'dist', 'browser')));
const chromiumSupport = join(root, 'e2e', 'dist', 'support', 'chromium.js');
let sharedBrowser = null;
if (browserFiles && existsSync(chromiumSupport)) {
  const { CHROMIUM, SHARED_BROWSER_ENV, launchSharedBrowser } = await import(chromiumSupport);
  if (existsSync(CHROMIUM)) {
    sharedBrowser = await launchSharedBrowser();
    process.env[SHARED_BROWSER_ENV] = sharedBrowser.wsEndpoint();
  }
}
// Not spawnSync: the shared browser's endpoint is served from this process while the tests run.
const child = spawn(
  process.execPath,
  ['--enable-source-maps', '--test', `--test-concurrency=${concurrency}`, '--test-timeout=900000', ...files],
  { stdio: 'inherit', cwd: root, env: process.env },
);
const status = await new Promise((resolve) => child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0))));
await sharedBrowser?.close();
process.exit(status);
