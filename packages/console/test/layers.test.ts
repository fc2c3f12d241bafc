import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

/**
 * The console's layers, lowest first (docs/architecture.md, "The console"): SQL only in
 * repositories, plugins below the services (they never reach into a feature), routes on top of
 * services, and the process wiring above all.
 */
const LAYERS = [
  ['db', 'json', 'errors', 'secrets', 'config', 'validation'],
  ['repositories', 'outbound'],
  ['plugins'],
  ['services'],
  ['routes'],
  ['app'],
  ['server'],
  ['cli'],
];

// This file runs compiled, from packages/console/dist/test/.
const SRC = fileURLToPath(new URL('../../src/', import.meta.url));
const checker = new URL('../../../../scripts/layers.mjs', import.meta.url).href;
const { layerViolations } = (await import(checker)) as {
  layerViolations(srcDir: string, layers: string[][]): string[];
};

test('no import in the console runs against its layers', () => {
  assert.deepEqual(layerViolations(SRC, LAYERS), []);
});

test('SQL is built only in repositories (and migrations)', async () => {
  const { readdirSync, readFileSync, statSync } = await import('node:fs');
  const { join, relative } = await import('node:path');
  const offenders: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) {
        if (!['repositories', 'db'].includes(name)) walk(path);
      } else if (/\b(selectFrom|insertInto|updateTable|deleteFrom)\(|\bsql`/.test(readFileSync(path, 'utf8'))) {
        offenders.push(relative(SRC, path));
      }
    }
  };
  walk(SRC);
  assert.deepEqual(offenders, []);
});
