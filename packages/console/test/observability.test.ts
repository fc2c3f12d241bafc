import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { generateToken } from '@palisade/protocol';
import { closedPort, eventually } from '@palisade/testkit';
import { ConfigError, loadConfig } from '../src/config.js';
import { readableLine } from '../src/plugins/logging.js';
import { renderMetrics } from '../src/plugins/metrics.js';
import { type ConsoleProcess, startConsoleProcess } from './console-process.js';
import { get, parseMetrics, processEnv } from './observability-support.js';
import { dialects, enrolledTestServer, registerUser, type TestApp, testApp } from './support.js';

const metricsUrl = (p: ConsoleProcess) => /Metrics for Prometheus on (http:\/\/\S+)/.exec(p.output())![1]!;

test('a log record reads as one line on a terminal: time, level, message, request, status, duration', () => {
  const record = {
    level: 30,
    time: Date.UTC(2026, 10, 23, 14, 2, 7, 415),
    pid: 1,
    hostname: 'h',
    reqId: 'req-7',
    req: { method: 'GET', url: '/api/v1/servers' },
    res: { statusCode: 200 },
    responseTime: 1.234,
    msg: 'request completed',
    server: 12,
  };
  assert.equal(
    readableLine(JSON.stringify(record)),
    '14:02:07.415 INFO  request completed GET /api/v1/servers 200 1.2 ms (req-7) server=12\n',
  );
  const failed = readableLine(
    JSON.stringify({ level: 50, time: 0, msg: 'x failed', err: { message: 'boom', stack: 'Error: boom\n    at f' } }),
  );
  assert.equal(failed, '00:00:00.000 ERROR x failed err=boom\nError: boom\n    at f\n');
  assert.equal(readableLine('not json'), 'not json\n', 'a line that is not JSON passes through');
});

test('the metrics address, access log and workers settings are read and checked like every other', () => {
  const defaults = loadConfig({});
  assert.equal(defaults.metricsAddr, null, 'no metrics listener unless asked');
  assert.equal(defaults.accessLog, false);
  assert.equal(defaults.workers, 1);
  assert.deepEqual(loadConfig({ PALISADE_METRICS_ADDR: '127.0.0.1:9464' }).metricsAddr, {
    host: '127.0.0.1',
    port: 9464,
  });
  assert.deepEqual(loadConfig({ PALISADE_METRICS_ADDR: '[::1]:9464' }).metricsAddr, { host: '::1', port: 9464 });
  const pg = { PALISADE_DATABASE_URL: 'postgres://u@db:5432/p' };
  assert.equal(loadConfig({ ...pg, PALISADE_WORKERS: '4' }).workers, 4);
  for (const [name, value, message] of [
    ['PALISADE_METRICS_ADDR', '9464', /expected host:port/],
    ['PALISADE_METRICS_ADDR', 'http://127.0.0.1:9464/metrics', /expected host:port/],
    ['PALISADE_METRICS_ADDR', '127.0.0.1:70000', /up to 65535/],
    ['PALISADE_ACCESS_LOG', 'maybe', /expected true or false/],
    ['PALISADE_WORKERS', '0', /PALISADE_WORKERS/],
    ['PALISADE_WORKERS', '2', /several workers need PostgreSQL/],
  ] as const) {
    assert.throws(
      () => loadConfig({ [name]: value }),
      (err: unknown) => err instanceof ConfigError && err.variable === name && message.test(err.message),
      `${name}=${value}`,
    );
  }
});

for (const dialect of dialects()) {
  describe(`request metrics and the outbox figures (${dialect})`, () => {
    let t: TestApp;
    before(async () => {
      t = await testApp(dialect);
    });
    after(() => t.close());

    test('requests are counted by the route the router matched, never the raw URL; only accepted check-ins count', async () => {
      const owner = await registerUser(t.app);
      const { daemon } = await enrolledTestServer(t.app, owner);
      const checkin = (token: string) =>
        t.app.inject({
          method: 'POST',
          url: '/api/agent/checkin',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
          payload: JSON.stringify({
            agent_version: '0.1.0',
            hostname: 'web-1',
            facts: { os: 'Debian GNU/Linux 12', cores: 2 },
            sample: {
              ts: t.clock.now,
              cpu_pct: 10,
              mem_used_mb: 1,
              mem_total_mb: 2,
              disk_used_pct: 3,
              load1: 0,
              rx_bps: 0,
              tx_bps: 0,
              disk_mount: '/',
            },
          }),
        });
      assert.equal((await checkin(daemon)).statusCode, 200);
      assert.equal((await checkin(generateToken('daemon'))).statusCode, 401);
      await t.app.inject({ method: 'GET', url: '/api/v1/servers/424242?probe=s3cret' });
      await t.app.inject({ method: 'GET', url: '/no/such/place-9876' });

      const page = (await t.app.metrics.snapshot())
        .flatMap((f) => f.samples.map((s) => `${f.name}${s.suffix} ${JSON.stringify(s.labels)} ${s.value}`))
        .join('\n');
      const samples = parseMetrics(renderMetrics(await t.app.metrics.snapshot()));
      assert.equal(samples.get('palisade_checkins_total'), 1, 'the refused check-in is not counted');
      assert.equal(
        samples.get('palisade_http_requests_total{method="POST",route="/api/agent/checkin",status="4xx"}'),
        1,
      );
      assert.equal(
        samples.get('palisade_http_requests_total{method="GET",route="/api/v1/servers/:id",status="4xx"}'),
        1,
      );
      assert.equal(samples.get('palisade_http_requests_total{method="GET",route="unmatched",status="4xx"}'), 1);
      assert.equal(
        samples.get(
          'palisade_http_request_duration_seconds_count{method="GET",route="/api/v1/servers/:id",status="4xx"}',
        ),
        1,
      );
      assert.equal(
        samples.get(
          'palisade_http_request_duration_seconds_bucket{method="GET",route="/api/v1/servers/:id",status="4xx",le="+Inf"}',
        ),
        1,
      );
      for (const raw of ['424242', 's3cret', 'place-9876']) assert.doesNotMatch(page, new RegExp(raw));
    });

    test('readyz is 503 naming the database when it does not answer; healthz stays 200', async () => {
      const own = await testApp(dialect);
      try {
        assert.equal((await own.app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200);
        await own.db.destroy(); // the database stops answering: every query now fails
        const ready = await own.app.inject({ method: 'GET', url: '/readyz' });
        assert.equal(ready.statusCode, 503);
        assert.deepEqual(ready.json(), {
          status: 'not ready',
          database: 'down',
          redis: 'not configured',
          // Nothing can be told of alert evaluation without the database.
          alerts: { last_round_at: null, age_s: null, late: null },
          error: 'database not reachable: see the console log',
        });
        assert.equal(ready.headers['cache-control'], 'no-store');
        assert.equal((await own.app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200);
      } finally {
        await own.close();
      }
    });

    test('the outbox figures count queued notifications and the age of the oldest, not delivered ones', async () => {
      assert.deepEqual(await t.app.services.health.outbox(), { queued: 0, oldestAgeS: 0 });
      const owner = await registerUser(t.app);
      const row = (status: 'queued' | 'delivered', ageS: number) => ({
        account_id: owner.id,
        kind: 'ticket.reply',
        payload: '{}',
        status,
        attempts: 0,
        next_attempt_at: t.clock.now + 3_600_000, // not due: the outbox worker leaves them alone
        locked_until: 0,
        created_at: t.clock.now - ageS * 1000,
        delivered_at: status === 'delivered' ? t.clock.now : null,
      });
      await t.db
        .insertInto('notifications')
        .values([row('queued', 90), row('queued', 30), row('delivered', 500)])
        .execute();
      assert.deepEqual(await t.app.services.health.outbox(), { queued: 2, oldestAgeS: 90 });
    });
  });

  describe(`health, readiness, metrics and logs of a console process (${dialect})`, () => {
    const { env, cleanup } = processEnv(dialect);
    after(cleanup);

    test('healthz and readyz answer any Host; metrics are on their own listener; no access lines by default', async () => {
      const p = await startConsoleProcess({
        ...env,
        PALISADE_LOG_LEVEL: 'info',
        PALISADE_METRICS_ADDR: '127.0.0.1:0',
        PALISADE_PUBLIC_URL: 'https://console.example.com',
      });
      try {
        const health = await get(`${p.url}/healthz`, { host: 'lb-probe.internal' });
        assert.equal(health.status, 200);
        assert.deepEqual(JSON.parse(health.body), { status: 'ok', pid: p.child.pid });
        const ready = await get(`${p.url}/readyz`, { host: '10.1.2.3' });
        assert.equal(ready.status, 200);
        const { alerts, ...checks } = JSON.parse(ready.body);
        assert.deepEqual(checks, { status: 'ready', database: 'ok', redis: 'not configured' });
        assert.equal(alerts.late, false, 'alert evaluation is on time (docs/alerts.md)');
        assert.equal(
          (await get(`${p.url}/api/v1/servers`, { host: 'lb-probe.internal' })).status,
          421,
          'the API keeps its host check',
        );
        assert.equal((await get(`${p.url}/api/v1/servers`)).status, 401);
        assert.equal((await get(`${p.url}/metrics`)).status, 404, 'metrics are not on the public port');

        const url = metricsUrl(p);
        assert.equal((await get(url.replace('/metrics', '/other'))).status, 404);
        const scraped = await get(url);
        assert.equal(scraped.status, 200);
        const samples = parseMetrics(scraped.body);
        assert.equal(samples.get('palisade_http_requests_total{method="GET",route="/api/v1/servers",status="4xx"}'), 2);
        assert.equal(samples.get('palisade_http_requests_total{method="GET",route="/healthz",status="2xx"}'), 1);
        assert.equal(samples.get('palisade_outbox_queued'), 0);
        assert.ok(samples.get('process_resident_memory_bytes')! > 10_000_000);
        assert.ok(samples.get('process_cpu_seconds_total')! > 0);
        assert.ok(samples.has('nodejs_eventloop_lag_p99_seconds'));
        assert.equal(samples.has('palisade_db_pool_connections'), dialect === 'postgres', 'pool figures on PostgreSQL');
        if (dialect === 'postgres') assert.ok(samples.get('palisade_db_pool_connections')! >= 1);

        // Not a terminal: one JSON record per line, and none per request at info.
        const lines = p
          .stdout()
          .split('\n')
          .filter((l) => l.startsWith('{'));
        assert.ok(lines.length > 0, p.output());
        for (const line of lines) JSON.parse(line);
        assert.doesNotMatch(p.output(), /incoming request|request completed/);
      } finally {
        assert.equal(await p.kill(), 0);
      }
    });

    test('PALISADE_ACCESS_LOG=1 writes a line per request, but never for the probes', async () => {
      const p = await startConsoleProcess({ ...env, PALISADE_LOG_LEVEL: 'info', PALISADE_ACCESS_LOG: '1' });
      try {
        await get(`${p.url}/healthz`);
        await get(`${p.url}/readyz`);
        await get(`${p.url}/api/v1/servers`);
        const completed = await eventually('the access line', () => {
          const line = p
            .stdout()
            .split('\n')
            .find((l) => l.includes('"request completed"'));
          return line ? JSON.parse(line) : undefined;
        });
        assert.equal(completed.res.statusCode, 401);
        // The request's logger is made when it first logs (plugins/logging.ts), with the request's id.
        assert.equal(typeof completed.reqId, 'string', 'the access line names its request');
        const incoming = JSON.parse(
          p
            .stdout()
            .split('\n')
            .find((l) => l.includes('"incoming request"'))!,
        );
        assert.equal(incoming.reqId, completed.reqId, 'both lines of one request carry its id');
        assert.doesNotMatch(p.output(), /"url":"\/(healthz|readyz)"/);
        assert.doesNotMatch(p.output(), /authorization|cookie/i);
      } finally {
        await p.kill();
      }
    });

    test('readyz is 503 naming Redis when Redis does not answer, without its address', async () => {
      const port = await closedPort();
      const p = await startConsoleProcess({ ...env, PALISADE_REDIS_URL: `redis://127.0.0.1:${port}` });
      try {
        const ready = await get(`${p.url}/readyz`);
        assert.equal(ready.status, 503);
        const body = JSON.parse(ready.body);
        assert.equal(body.status, 'not ready');
        assert.equal(body.database, 'ok');
        assert.equal(body.redis, 'down');
        assert.match(body.error, /^redis not reachable/);
        assert.doesNotMatch(ready.body, new RegExp(String(port)));
        assert.equal((await get(`${p.url}/healthz`)).status, 200, 'the process is still up');
      } finally {
        await p.kill();
      }
    });

    test('readyz checks Redis when it answers', { skip: !process.env.PALISADE_TEST_REDIS_URL }, async () => {
      const p = await startConsoleProcess({
        ...env,
        PALISADE_REDIS_URL: process.env.PALISADE_TEST_REDIS_URL!,
        PALISADE_REDIS_PREFIX: `obs-${process.pid}`,
      });
      try {
        const ready = await get(`${p.url}/readyz`);
        assert.equal(ready.status, 200);
        const { alerts, ...checks } = JSON.parse(ready.body);
        assert.deepEqual(checks, { status: 'ready', database: 'ok', redis: 'ok' });
        assert.equal(alerts.late, false);
      } finally {
        await p.kill();
      }
    });
  });
}
