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
let failed = 0;
for (const bench of benches) {
  console.log(`\n##### ${bench}`);
  const res = spawnSync(process.execPath, [join(dir, bench)], { stdio: 'inherit' });
  if (res.status !== 0) failed += 1;
}
process.exit(failed > 0 ? 1 : 0);
