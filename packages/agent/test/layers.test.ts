import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

/** The agent's layers, lowest first (docs/architecture.md, "The agent"). */
const LAYERS = [
  ['lib', 'version', 'log', 'deps', 'release'],
  ['state'],
  ['config'],
  ['measure', 'protection', 'alerter', 'jobs', 'update'],
  ['checkin', 'bench'],
  ['api'],
  ['daemon', 'runtime'],
  ['cli', 'index'],
];

// This file runs compiled, from packages/agent/dist/test/.
const SRC = fileURLToPath(new URL('../../src/', import.meta.url));
const checker = new URL('../../../../scripts/layers.mjs', import.meta.url).href;
const { layerViolations } = (await import(checker)) as {
  layerViolations(srcDir: string, layers: string[][]): string[];
};

test('no import in the agent runs against its layers', () => {
  assert.deepEqual(layerViolations(SRC, LAYERS), []);
});

test('the check finds an import that runs upward, a dynamic one too', () => {
  const dir = mkdtempSync(join(tmpdir(), 'palisade-layers-'));
  try {
    mkdirSync(join(dir, 'lib'));
    mkdirSync(join(dir, 'api'));
    writeFileSync(join(dir, 'api', 'server.ts'), "import { x } from '../lib/x.js';\nexport const y = x;\n");
    writeFileSync(
      join(dir, 'lib', 'x.ts'),
      "export const x = 1;\nexport const later = () => import('../api/server.js');\n",
    );
    assert.deepEqual(layerViolations(dir, [['lib'], ['api']]), ['lib/x.ts → api/server.ts']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
