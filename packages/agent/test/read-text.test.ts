// readText (deps.ts) reads /proc and small files into a kept buffer, doubling it while a file fills it.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { tempDir } from '@palisade/testkit';
import { readText } from '../src/deps.js';

const dir = tempDir();
after(() => dir.remove());

test('a file several times the first buffer, with multi-byte characters, is read whole', async () => {
  const file = join(dir.path, 'big.txt');
  const text = Array.from({ length: 4000 }, (_, i) => `line ${i} — ünïcödé ✓\n`).join('');
  writeFileSync(file, text);
  assert.ok(Buffer.byteLength(text) > 64 * 1024);
  assert.equal(await readText(file), text);
  // Read again with the buffers it kept: the same text, nothing of the previous read left over.
  writeFileSync(file, 'short\n');
  assert.equal(await readText(file), 'short\n');
});

test('a /proc file, which reports size 0, is read whole', async () => {
  const text = await readText('/proc/self/status');
  assert.match(text, /^VmRSS:/m);
  assert.equal(text.split('\n')[0], readFileSync('/proc/self/status', 'utf8').split('\n')[0]);
});

test('a missing file fails as readFile does', async () => {
  await assert.rejects(readText(join(dir.path, 'absent')), { code: 'ENOENT' });
});
