import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

/**
 * The console's layers, lowest first (docs/architecture.md, "The console"): SQL only in
 * repositories, plugins below the services (they never reach into a feature), routes on top of
 * services, and the process wiring above all.
 */
const LAYERS = [
  ['db', 'json', 'errors', 'secrets', 'config', 'validation', 'packaged', 'heap'],
  ['repositories', 'outbound', 'backup', 'release-key'],
  ['plugins'],
  ['services'],
  ['routes'],
  ['app'],
  ['server'],
  ['workers'],
  ['cli'],
];

// This file runs compiled, from packages/console/dist/test/.
const SRC = fileURLToPath(new URL('../../src/', import.meta.url));
const checker = new URL('../../../../scripts/layers.mjs', import.meta.url).href;
const { layerViolations, relativeImports } = (await import(checker)) as {
  layerViolations(srcDir: string, layers: string[][]): string[];
  relativeImports(text: string): string[];
};

const { readdirSync, readFileSync, statSync } = await import('node:fs');
const { dirname, join, relative, resolve, sep } = await import('node:path');

/** Every source file under `dir` (relative to src/), skipping the folders named in `skip`. */
function files(dir: string, skip: string[] = []): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      if (!skip.includes(name)) out.push(...files(path, skip));
    } else if (/\.ts$/.test(name)) out.push(relative(SRC, path).split(sep).join('/'));
  }
  return out;
}

/** The files under src/ that `file` imports, as paths relative to src/. */
function importsOf(file: string): string[] {
  const path = join(SRC, file);
  return relativeImports(readFileSync(path, 'utf8')).map((spec) =>
    relative(SRC, resolve(dirname(path), spec).replace(/\.js$/, '.ts'))
      .split(sep)
      .join('/'),
  );
}

test('no import in the console runs against its layers', () => {
  assert.deepEqual(layerViolations(SRC, LAYERS), []);
});

test('SQL is built only in repositories (and migrations)', () => {
  const offenders = files(SRC, ['repositories', 'db']).filter((file) =>
    /\b(selectFrom|insertInto|updateTable|deleteFrom)\(|\bsql`/.test(readFileSync(join(SRC, file), 'utf8')),
  );
  assert.deepEqual(offenders, []);
});

test('plugins never import a service (they reach one through app.services)', () => {
  const offenders = files(join(SRC, 'plugins')).flatMap((file) =>
    importsOf(file)
      .filter((target) => target.startsWith('services/'))
      .map((target) => `${file} → ${target}`),
  );
  assert.deepEqual(offenders, []);
});

test('the process (server.ts) reaches the database only through services', () => {
  const offenders = importsOf('server.ts').filter((target) => target.startsWith('repositories/'));
  assert.deepEqual(offenders, []);
  assert.doesNotMatch(
    readFileSync(join(SRC, 'server.ts'), 'utf8'),
    /\.(selectFrom|insertInto|updateTable|deleteFrom)\(/,
  );
});

/** The one module per table that reads its JSON columns (and maps its rows to views). */
const JSON_COLUMN_READERS: Record<string, string> = {
  'servers, benchmark_runs': 'services/servers/views.ts',
  samples: 'services/checkin-score-windows.ts',
  catalog: 'services/catalog.service.ts',
  accounts: 'services/accounts.service.ts',
  alert_rules: 'services/alerts/views.ts',
};

test('JSON columns are read with parseJson, each table in one module', () => {
  const readers = files(SRC, ['db'])
    .filter((file) => file !== 'json.ts' && importsOf(file).includes('json.ts'))
    .sort();
  assert.deepEqual(readers, Object.values(JSON_COLUMN_READERS).sort());
});

test('the servers module is one folder of files under 500 lines, and the old modules are gone', () => {
  const folder = join(SRC, 'services', 'servers');
  for (const name of readdirSync(folder)) {
    const lines = readFileSync(join(folder, name), 'utf8').split('\n').length;
    assert.ok(lines < 500, `services/servers/${name} has ${lines} lines`);
  }
  const services = readdirSync(join(SRC, 'services'));
  for (const gone of ['fleet.service.ts', 'servers.service.ts', 'agent-client.ts'])
    assert.ok(!services.includes(gone), `services/${gone} is back: it belongs in services/servers/`);
});
