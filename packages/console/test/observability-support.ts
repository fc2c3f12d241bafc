import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type DialectName, dropSchema } from './support.js';

/** One GET on a new connection (so each may reach another worker), with any Host header. */
export function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers, agent: false }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d) => {
          body += d;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      })
      .on('error', reject);
  });
}

/** A data dir (and on PostgreSQL a schema of its own) for console processes; `cleanup` removes both. */
export function processEnv(dialect: DialectName): { env: Record<string, string>; cleanup: () => Promise<void> } {
  const dataDir = mkdtempSync(join(tmpdir(), 'palisade-proc-'));
  const env: Record<string, string> = { PALISADE_DATA_DIR: dataDir };
  const url = process.env.PALISADE_TEST_DATABASE_URL;
  const schema = `p_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  if (dialect === 'postgres' && url)
    Object.assign(env, { PALISADE_DATABASE_URL: url, PALISADE_DATABASE_SCHEMA: schema });
  return {
    env,
    async cleanup() {
      if (dialect === 'postgres' && url) await dropSchema(url, schema);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** The Prometheus page as `name{labels}` → value, after checking every line is in the text format. */
export function parseMetrics(page: string): Map<string, number> {
  const samples = new Map<string, number>();
  const typed = new Set<string>();
  for (const line of page.split('\n')) {
    if (line === '') continue;
    const type = /^# TYPE ([a-z_:][a-z0-9_:]*) (counter|gauge|histogram)$/.exec(line);
    if (type) {
      assert.ok(!typed.has(type[1]!), `${type[1]} is typed twice`);
      typed.add(type[1]!);
      continue;
    }
    if (line.startsWith('# HELP ')) continue;
    const m = /^([a-z_:][a-z0-9_:]*(?:\{[a-z_]+="(?:[^"\\]|\\.)*"(?:,[a-z_]+="(?:[^"\\]|\\.)*")*\})?) (\S+)$/.exec(
      line,
    );
    assert.ok(m, `not a sample line: ${line}`);
    samples.set(m[1]!, Number(m[2]));
  }
  return samples;
}
