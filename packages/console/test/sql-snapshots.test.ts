/**
 * SQL snapshots: every query the repositories (src/repositories/*.repository.ts) build, compiled
 * for SQLite and PostgreSQL into packages/console/queries/<repository>.<dialect>.sql, so a change to
 * a query shows in the diff of a review (docs/queries.md). The test compiles them again, without a
 * database, and fails when they differ from the checked-in files; `UPDATE_SQL_SNAPSHOTS=1` rewrites
 * them.
 *
 * Each exported function is called with placeholder arguments made from its parameters' types
 * (read from the TypeScript sources), on a Kysely whose driver records each compiled query instead
 * of running it: once with every query answering no rows, once with one placeholder row, so the
 * queries that follow a first read are recorded too. A function that records no query fails the test.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { test } from 'node:test';
import {
  type CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type QueryResult,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
  sql,
} from 'kysely';
import ts from 'typescript';
import type { DB } from '../src/db/schema.js';

const consoleDir = new URL('../../', import.meta.url).pathname;
const sourceDir = join(consoleDir, 'src/repositories');
const compiledDir = new URL('../src/repositories/', import.meta.url).pathname;
const snapshotDir = join(consoleDir, 'queries');
const dialects = ['sqlite', 'postgres'] as const;
type DialectName = (typeof dialects)[number];
/** A call that goes on past this many queries is stopped (a loop that a placeholder row keeps going). */
const maxQueriesPerCall = 50;

class StopCall extends Error {}

/** A Kysely driver that records each compiled query and answers it with `rows()`. */
class RecordingDriver implements Driver {
  readonly queries: string[] = [];
  rows: () => unknown[] = () => [];
  async init() {}
  async acquireConnection(): Promise<DatabaseConnection> {
    return {
      executeQuery: async <R>(query: CompiledQuery): Promise<QueryResult<R>> => {
        if (this.queries.length >= maxQueriesPerCall) throw new StopCall();
        this.queries.push(query.sql);
        const rows = this.rows() as R[];
        return { rows, numAffectedRows: BigInt(rows.length) };
      },
      // biome-ignore lint/correctness/useYield: no rows to stream from a recording
      streamQuery: async function* () {
        throw new StopCall();
      },
    };
  }
  async beginTransaction() {}
  async commitTransaction() {}
  async rollbackTransaction() {}
  async releaseConnection() {}
  async destroy() {}
}

function recordingDatabase(name: DialectName) {
  const driver = new RecordingDriver();
  const dialect: Dialect =
    name === 'sqlite'
      ? {
          createAdapter: () => new SqliteAdapter(),
          createDriver: () => driver,
          createQueryCompiler: () => new SqliteQueryCompiler(),
          createIntrospector: (db) => new SqliteIntrospector(db),
        }
      : {
          createAdapter: () => new PostgresAdapter(),
          createDriver: () => driver,
          createQueryCompiler: () => new PostgresQueryCompiler(),
          createIntrospector: (db) => new PostgresIntrospector(db),
        };
  return { db: new Kysely<DB>({ dialect }), driver };
}

/** A row whose every column reads as 1 (a count, an id, a time): enough for callers to go on. */
const placeholderRow = new Proxy({}, { get: (_target, key) => (key === 'then' ? undefined : 1) });

/** How to call an exported function: whether it takes the database handle first, and fresh placeholder arguments. */
interface Call {
  takesDatabase: boolean;
  args: () => unknown[];
}

/** Placeholder arguments for each exported function of each repository file, made from the parameters' types. */
function placeholderCalls(files: readonly string[]) {
  const program = ts.createProgram(
    files.map((f) => join(sourceDir, f)),
    {
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      strict: true,
      skipLibCheck: true,
      noEmit: true,
    },
  );
  const checker = program.getTypeChecker();
  const placeholderOf = (type: ts.Type, depth: number): unknown => {
    if (depth > 6) return undefined;
    if (type.isUnion()) {
      const present = type.types.filter((t) => !(t.flags & (ts.TypeFlags.Null | ts.TypeFlags.Undefined)));
      if (present.length === 0) return null;
      // `boolean` is the union true | false: take true, as for a lone boolean.
      const chosen = present.find((t) => t.flags & ts.TypeFlags.BooleanLiteral && checker.typeToString(t) === 'true');
      return placeholderOf(chosen ?? present[0]!, depth);
    }
    if (type.isStringLiteral()) return type.value;
    if (type.isNumberLiteral()) return type.value;
    if (type.flags & ts.TypeFlags.BooleanLiteral) return checker.typeToString(type) === 'true';
    if (type.flags & (ts.TypeFlags.String | ts.TypeFlags.TemplateLiteral)) return 'text';
    if (type.flags & ts.TypeFlags.Number) return 1;
    if (type.flags & ts.TypeFlags.Boolean) return true;
    if (type.flags & ts.TypeFlags.BigInt) return 1n;
    if (type.flags & (ts.TypeFlags.Null | ts.TypeFlags.Undefined | ts.TypeFlags.Void)) return null;
    // A piece of SQL handed in by the caller shows as a marked placeholder in the snapshot.
    if (type.getSymbol()?.name === 'RawBuilder') return sql.raw('/* sql argument */ select 1');
    if (checker.isArrayType(type) || checker.isTupleType(type)) {
      const elements = checker.getTypeArguments(type as ts.TypeReference);
      return checker.isTupleType(type)
        ? elements.map((t) => placeholderOf(t, depth + 1))
        : [placeholderOf(elements[0]!, depth + 1)];
    }
    if (type.getCallSignatures().length > 0) return async () => undefined;
    const object: Record<string, unknown> = {};
    // A record (`Record<string, number>`): one entry.
    const index = checker.getIndexInfosOfType(type)[0];
    if (index) object.key = placeholderOf(index.type, depth + 1);
    for (const property of checker.getPropertiesOfType(type)) {
      object[property.name] = placeholderOf(checker.getTypeOfSymbol(property), depth + 1);
    }
    return object;
  };
  const byFile = new Map<string, Map<string, Call>>();
  for (const file of files) {
    const source = program.getSourceFile(join(sourceDir, file))!;
    const moduleSymbol = checker.getSymbolAtLocation(source)!;
    const functions = new Map<string, Call>();
    for (const symbol of checker.getExportsOfModule(moduleSymbol)) {
      const signature = checker.getTypeOfSymbolAtLocation(symbol, source).getCallSignatures()[0];
      if (!signature) continue;
      const types = signature.getParameters().map((p) => checker.getTypeOfSymbolAtLocation(p, source));
      // The handle is `Database` (Kysely<DB>) or a transaction of it.
      const takesDatabase =
        types.length > 0 && /^(Database|Kysely<DB>|Transaction<DB>)$/.test(checker.typeToString(types[0]!));
      const rest = takesDatabase ? types.slice(1) : types;
      functions.set(symbol.name, { takesDatabase, args: () => rest.map((t) => placeholderOf(t, 0)) });
    }
    byFile.set(file, functions);
  }
  return byFile;
}

/** The queries each exported function builds on one dialect, in call order, each once. */
async function recordQueries(name: DialectName, file: string, functions: Map<string, Call>) {
  const module = (await import(join(compiledDir, file.replace(/\.ts$/, '.js')))) as Record<string, unknown>;
  const recorded = new Map<string, string[]>();
  for (const [exportName, call] of [...functions].sort(([a], [b]) => a.localeCompare(b))) {
    const fn = module[exportName];
    if (typeof fn !== 'function') continue;
    const queries: string[] = [];
    for (const rows of [() => [], () => [placeholderRow]]) {
      // A fresh handle per call: runCompiled caches compiled queries per handle.
      const { db, driver } = recordingDatabase(name);
      driver.rows = rows;
      try {
        const result = await (call.takesDatabase ? fn(db, ...call.args()) : fn(...call.args()));
        // A function that returns a query for its caller to run (samplesInsertion): compile it.
        if (isCompilable(result)) driver.queries.push(result.compile(db).sql);
      } catch {
        // A placeholder row or argument may not satisfy what follows the queries: they are recorded.
      }
      for (const q of driver.queries) if (!queries.includes(q)) queries.push(q);
    }
    recorded.set(exportName, queries);
  }
  return recorded;
}

function isCompilable(value: unknown): value is { compile(db: Kysely<DB>): CompiledQuery } {
  return typeof value === 'object' && value !== null && typeof (value as { compile?: unknown }).compile === 'function';
}

function snapshotText(file: string, recorded: Map<string, string[]>) {
  const lines = [
    `-- Generated by packages/console/test/sql-snapshots.test.ts from src/repositories/${file}:`,
    '-- do not edit; run the test with UPDATE_SQL_SNAPSHOTS=1 to rewrite (docs/queries.md).',
  ];
  for (const [exportName, queries] of recorded) {
    lines.push('', `-- ${exportName}`);
    for (const q of queries) lines.push(`${q.trim()};`);
  }
  return `${lines.join('\n')}\n`;
}

test('the checked-in SQL snapshots match the queries the repositories build on both dialects', async () => {
  const files = readdirSync(sourceDir)
    .filter((f) => f.endsWith('.repository.ts'))
    .sort();
  const callsByFile = placeholderCalls(files);
  const update = process.env.UPDATE_SQL_SNAPSHOTS === '1';
  const silent = new Map<string, number>();
  const differing: string[] = [];
  if (update) mkdirSync(snapshotDir, { recursive: true });
  for (const file of files) {
    for (const name of dialects) {
      const recorded = await recordQueries(name, file, callsByFile.get(file)!);
      for (const [exportName, queries] of recorded) {
        // Some build a query on one dialect only (PostgreSQL's advisory locks): none on both is a miss.
        const key = `${file} ${exportName}`;
        if (queries.length === 0) silent.set(key, (silent.get(key) ?? 0) + 1);
      }
      const path = join(snapshotDir, `${file.replace(/\.repository\.ts$/, '')}.${name}.sql`);
      const text = snapshotText(file, recorded);
      if (update) writeFileSync(path, text);
      else if (!existsSync(path) || readFileSync(path, 'utf8') !== text) differing.push(`queries/${basename(path)}`);
    }
  }
  assert.deepEqual(
    [...silent].filter(([, dialectsWithout]) => dialectsWithout === dialects.length).map(([key]) => key),
    [],
    'every exported repository function builds a query on at least one dialect',
  );
  const stale = readdirSync(snapshotDir).filter(
    (f) => !files.some((file) => f.startsWith(`${file.replace(/\.repository\.ts$/, '')}.`)),
  );
  assert.deepEqual(stale, [], 'a snapshot for a repository file that no longer exists');
  assert.deepEqual(
    differing,
    [],
    'the repositories build other queries than the checked-in snapshots: run this test with UPDATE_SQL_SNAPSHOTS=1 to rewrite them, and review the diff',
  );
});
