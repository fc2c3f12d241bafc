import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { eventually } from '@palisade/testkit';
import { runConsoleCli, startConsoleProcess } from './console-process.js';
import { get, parseMetrics, processEnv } from './observability-support.js';
import { dialects } from './support.js';

const pidOf = async (url: string) => (JSON.parse((await get(`${url}/healthz`)).body) as { pid: number }).pid;

describe('several workers refuse SQLite', () => {
  const { env, cleanup } = processEnv('sqlite');
  after(cleanup);

  test('--workers 2 and PALISADE_WORKERS=2 on SQLite exit 1 naming the setting and what to do', async () => {
    for (const [extra, args] of [
      [{}, ['serve', '--workers', '2']],
      [{ PALISADE_WORKERS: '2' }, ['serve']],
    ] as const) {
      const { code, out } = await runConsoleCli({ ...env, ...extra }, [...args]);
      assert.equal(code, 1, out);
      assert.match(out, /PALISADE_WORKERS: several workers need PostgreSQL \(set PALISADE_DATABASE_URL\)/);
      assert.doesNotMatch(out, /listening on/);
    }
  });
});

describe('several workers on PostgreSQL', { skip: !dialects().includes('postgres') }, () => {
  const { env, cleanup } = processEnv('postgres');
  after(cleanup);

  test('2 workers share the port, a killed worker is replaced, metrics name each worker, SIGTERM stops all', async () => {
    const p = await startConsoleProcess({ ...env, PALISADE_METRICS_ADDR: '127.0.0.1:0' }, ['--workers', '2']);
    try {
      assert.match(p.output(), /listening on http:\/\/\S+ \(2 workers\)/);
      assert.equal((p.output().match(/Sign in as/g) ?? []).length, 1, 'the first admin is made once, by the primary');
      const first = new Set<number>();
      await eventually('both workers answering', async () => {
        first.add(await pidOf(p.url));
        return first.size === 2 ? true : undefined;
      });
      assert.ok(!first.has(p.child.pid!), 'the primary serves no requests');

      const scraped = parseMetrics((await get(/Metrics for Prometheus on (\S+)/.exec(p.output())![1]!)).body);
      for (const pid of first)
        assert.ok(scraped.get(`process_resident_memory_bytes{worker="${pid}"}`)! > 0, `worker ${pid}`);

      const [killed, kept] = [...first];
      process.kill(killed!, 'SIGKILL');
      await p.waitFor(new RegExp(`worker ${killed} ended \\(SIGKILL\\); starting another`));
      const replacement = await eventually('a new worker answering', async () => {
        const pid = await pidOf(p.url);
        return pid !== kept ? pid : undefined;
      });
      assert.notEqual(replacement, killed);
      // Requests keep being answered while and after the worker is replaced.
      for (let i = 0; i < 6; i++) assert.notEqual(await pidOf(p.url), killed);
    } finally {
      assert.equal(await p.kill('SIGTERM'), 0, p.output());
    }
    assert.match(p.output(), /SIGTERM: shutting down 2 workers/);
    assert.equal((p.output().match(/worker \d+: SIGTERM: shutting down/g) ?? []).length, 2, p.output());
  });
});
