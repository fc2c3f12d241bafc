#!/usr/bin/env node
// `npm run bench`: every benchmark in bench/, one after another; `npm run bench -- proxy` runs those whose name contains a word.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

const dir = new URL('../bench/', import.meta.url).pathname;
const words = process.argv.slice(2);
const benches = readdirSync(dir)
  .filter((f) => f.endsWith('.mjs') && f !== 'lib.mjs' && !f.startsWith('_'))
  .filter((f) => words.length === 0 || words.some((w) => f.includes(w)))
  .sort();
// The PostgreSQL (and Redis) figures need a database to measure: say so rather than leave them out silently.
if (!process.env.PALISADE_BENCH_DATABASE_URL) {
  console.log(
    'PostgreSQL figures are skipped: set PALISADE_BENCH_DATABASE_URL (and PALISADE_BENCH_REDIS_URL) to measure them, ' +
      'e.g. PALISADE_BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm run bench',
  );
}
let failed = 0;
for (const bench of benches) {
  console.log(`\n##### ${bench}`);
  const res = spawnSync(process.execPath, [join(dir, bench)], { stdio: 'inherit' });
  if (res.status !== 0) failed += 1;
}
process.exit(failed > 0 ? 1 : 0);
