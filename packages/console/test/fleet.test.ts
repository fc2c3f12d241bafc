import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { generateToken, hashToken, serverDetailSchema } from '@palisade/protocol';
import { checkAddress } from '../src/outbound/target-policy.js';
import {
  createToken,
  dialects,
  insertTestServer,
  registerUser,
  type TestApp,
  type TestUser,
  testApp,
} from './support.js';

/** A loopback port with nothing listening on it. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function checkinPayload(now: number, overrides: Record<string, unknown> = {}) {
  return {
    agent_version: '0.1.0',
    hostname: 'web-1',
    public_ip: '203.0.113.10',
    facts: { os: 'Debian GNU/Linux 12', kernel: '6.1.0-30-amd64', cores: 2, arch: 'x64', mem_total_mb: 8000 },
    sample: {
      ts: now,
      cpu_pct: 12.5,
      mem_used_mb: 2000,
      mem_total_mb: 8000,
      disk_used_pct: 40,
      load1: 0.3,
      rx_bps: 1000,
      tx_bps: 500,
    },
    protection: { backend: 'monitor' },
    alerter: { webhook_set: false },
    ...overrides,
  };
}

for (const dialect of dialects()) {
  describe(`fleet: check-ins, sections and proxies (${dialect})`, () => {
    let t: TestApp;
    let owner: TestUser;
    let stranger: TestUser;
    let token: string;
    before(async () => {
      t = await testApp(dialect, { PALISADE_ALLOW_PRIVATE_TARGETS: '1' });
      owner = await registerUser(t.app);
      stranger = await registerUser(t.app);
      token = await createToken(t.app, owner);
    });
    after(() => t.close());

    async function enrolledServer(apiUrl?: string) {
      const server = await insertTestServer(t.app, owner, { hostname: null, public_ip: null });
      const daemon = generateToken('daemon');
      await t.db
        .updateTable('servers')
        .set({
          daemon_token_hash: hashToken(daemon),
          api_url: apiUrl ?? `http://127.0.0.1:${await closedPort()}`,
          api_key_enc: t.app.secrets.seal(generateToken('agentKey')),
        })
        .where('id', '=', server.id)
        .execute();
      return { server, daemon };
    }

    const checkin = (daemon: string | null, body: unknown, raw?: string) =>
      t.app.inject({
        method: 'POST',
        url: '/api/agent/checkin',
        headers: { 'content-type': 'application/json', ...(daemon ? { authorization: `Bearer ${daemon}` } : {}) },
        payload: raw ?? JSON.stringify(body),
      });
    const v1 = (url: string) => t.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } });
    const dash = (method: 'GET' | 'POST' | 'DELETE' | 'PATCH', url: string, user = owner, body?: unknown) =>
      t.app.inject({
        method,
        url,
        headers: { cookie: user.cookie, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
      });

    test('a check-in stores facts, the sample and the score; v1 shows the server online', async () => {
      const { server, daemon } = await enrolledServer();
      const res = await checkin(daemon, checkinPayload(t.clock.now));
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json(), { data: { interval_s: 30, jobs: [] } });
      const detail = serverDetailSchema.strict().parse((await v1(`/api/v1/servers/${server.id}`)).json().data);
      assert.equal(detail.online, true);
      assert.equal(detail.hostname, 'web-1');
      assert.equal(detail.public_ip, '203.0.113.10');
      assert.equal(detail.last_seen, t.clock.now);
      assert.equal(detail.facts.cores, 2);
      assert.equal(detail.latest_sample?.cpu_pct, 12.5);
      assert.equal(detail.score, 1000);
      t.clock.advance(121_000);
      const later = (await v1(`/api/v1/servers/${server.id}`)).json().data;
      assert.equal(later.online, false, 'offline two minutes after the last check-in');
      assert.ok(later.score < 1000);
      assert.deepEqual(later.score_notes, ['Last check-in 2 min ago']);
    });

    test('check-ins with a missing, malformed, unknown or deleted token answer 401', async () => {
      const { server, daemon } = await enrolledServer();
      for (const bad of [null, 'dmn_short', generateToken('daemon'), generateToken('personal')]) {
        const res = await checkin(bad, checkinPayload(t.clock.now));
        assert.equal(res.statusCode, 401);
      }
      assert.equal((await dash('DELETE', `/api/servers/${server.id}`)).statusCode, 200);
      assert.equal(
        (await checkin(daemon, checkinPayload(t.clock.now))).statusCode,
        401,
        'a deleted server’s token stops working',
      );
    });

    test('malformed check-ins answer 400 naming the field and store nothing', async () => {
      const { server, daemon } = await enrolledServer();
      const now = t.clock.now;
      const cases: [unknown, RegExp][] = [
        [{ ...checkinPayload(now), hostname: undefined }, /^hostname: /],
        [{ ...checkinPayload(now), public_ip: 'not-an-ip' }, /^public_ip: /],
        [{ ...checkinPayload(now), facts: 'linux' }, /^facts: /],
        [{ ...checkinPayload(now), facts: { big: 'x'.repeat(20_000) } }, /^facts: larger than/],
        [
          { ...checkinPayload(now), sample: { ...checkinPayload(now).sample, cpu_pct: 170 } },
          /^sample.cpu_pct: expected 0 to 100/,
        ],
        [{ ...checkinPayload(now), sample: { ...checkinPayload(now).sample, ts: 'now' } }, /^sample.ts: /],
        [
          { ...checkinPayload(now), sample: { ...checkinPayload(now).sample, rx_bps: -1 } },
          /^sample.rx_bps: must not be negative/,
        ],
        [
          { ...checkinPayload(now), sample: { ...checkinPayload(now).sample, mem_used_mb: undefined } },
          /^sample.mem_used_mb: /,
        ],
        [[1, 2, 3], /^body: expected a JSON object/],
      ];
      for (const [body, message] of cases) {
        const res = await checkin(daemon, body);
        assert.equal(res.statusCode, 400, `${JSON.stringify(body).slice(0, 80)} → ${res.body}`);
        assert.match(res.json().error, message);
      }
      assert.equal((await checkin(daemon, null, '{"agent_version":')).statusCode, 400);
      const samples = await t.db.selectFrom('samples').selectAll().where('server_id', '=', server.id).execute();
      assert.equal(samples.length, 0);
      const row = await t.db.selectFrom('servers').selectAll().where('id', '=', server.id).executeTakeFirstOrThrow();
      assert.equal(row.last_seen, null);
      assert.equal(row.hostname, null);
    });

    test('an agent clock far off is replaced by the console’s receive time', async () => {
      const { server, daemon } = await enrolledServer();
      await checkin(daemon, checkinPayload(t.clock.now - 3600_000));
      const detail = (await v1(`/api/v1/servers/${server.id}`)).json().data;
      assert.equal(detail.latest_sample.ts, t.clock.now);
    });

    test('sections: overview, score, facts, history and benchmarks; bad names and ranges are 400', async () => {
      const { server, daemon } = await enrolledServer();
      for (let i = 0; i < 5; i += 1) {
        await checkin(
          daemon,
          checkinPayload(t.clock.now, { sample: { ...checkinPayload(t.clock.now).sample, cpu_pct: 10 * (i + 1) } }),
        );
        t.clock.advance(30_000);
      }
      const section = async (query: string) => dash('GET', `/api/servers/${server.id}/section?${query}`);
      const score = (await section('name=score')).json().data;
      assert.deepEqual(Object.keys(score).sort(), [
        'as_of',
        'components',
        'last_known_score',
        'notes',
        'score',
        'state',
        'weights',
      ]);
      assert.equal(score.state, 'online');
      assert.equal(score.weights.cpu, 200);
      const facts = (await section('name=facts')).json().data;
      assert.equal(facts.facts.kernel, '6.1.0-30-amd64');
      const overview = (await section('name=overview')).json().data;
      assert.equal(overview.id, server.id);
      assert.equal(overview.enrolled, true);
      assert.ok(!JSON.stringify(overview).includes('api_url'), 'the agent address stays on the console');
      const history = (await section('name=history&range=1h')).json().data;
      assert.equal(history.range, '1h');
      assert.equal(history.bucket_ms, 10_000);
      assert.deepEqual(
        history.samples.map((s: { cpu_pct: number }) => s.cpu_pct),
        [10, 20, 30, 40, 50],
      );
      const benchmarks = (await section('name=benchmarks')).json().data;
      assert.deepEqual(benchmarks, { runs: [] });
      for (const [query, message] of [
        ['name=nope', /^name: /],
        ['', /^name: /],
        ['name=history&range=2h', /^range: /],
      ] as const) {
        const res = await section(query);
        assert.equal(res.statusCode, 400);
        assert.match(res.json().error, message);
      }
      assert.equal((await dash('GET', `/api/servers/${server.id}/section?name=score`, stranger)).statusCode, 404);
    });

    test('raw samples roll up into 5-minute and hourly averages, and the oldest expire', async () => {
      const { server, daemon } = await enrolledServer();
      const start = t.clock.now;
      for (let i = 0; i < 10; i += 1) {
        await checkin(
          daemon,
          checkinPayload(t.clock.now, {
            sample: { ...checkinPayload(t.clock.now).sample, cpu_pct: i % 2 === 0 ? 10 : 30 },
          }),
        );
        t.clock.advance(30_000);
      }
      t.clock.now = start + 25 * 3600_000;
      await t.app.services.checkins.rollupSamples();
      const rows = await t.db
        .selectFrom('samples')
        .selectAll()
        .where('server_id', '=', server.id)
        .orderBy('ts')
        .execute();
      assert.ok(rows.every((r) => r.resolution === '5m'));
      assert.equal(
        rows.reduce((n, r) => n + JSON.parse(r.extra).samples, 0),
        10,
        'every raw sample went into a 5-minute bucket',
      );
      for (const r of rows) assert.ok(r.cpu_pct >= 10 && r.cpu_pct <= 30);
      t.clock.now = start + 8 * 86_400_000;
      await t.app.services.checkins.rollupSamples();
      const hourly = await t.db.selectFrom('samples').selectAll().where('server_id', '=', server.id).execute();
      assert.ok(hourly.length >= 1 && hourly.every((r) => r.resolution === '1h'));
      t.clock.now = start + 91 * 86_400_000;
      await t.app.services.checkins.rollupSamples();
      assert.equal(
        (await t.db.selectFrom('samples').selectAll().where('server_id', '=', server.id).execute()).length,
        0,
      );
      t.clock.now = start + 10 * 30_000; // back to the present, so the sessions of the other tests stay valid
    });

    test('the control proxy accepts exactly the 20 allowlisted paths', async () => {
      const { server } = await enrolledServer();
      const bad = [
        '',
        'path=',
        'path=../x',
        'path=%2e%2e%2fx',
        'path=Whitelist',
        'path=WHITELIST',
        'path=whitelist/',
        'path=/whitelist',
        'path=whitelist%2F',
        'path=whitelist%00',
        'path=whitelist&path=blacklist',
        'path=enroll',
        'path=health',
        'path=metrics',
        'path=attacks/blacklist/status/x',
        'path=%20whitelist',
      ];
      for (const query of bad) {
        const res = await dash('GET', `/api/servers/${server.id}/control?${query}`);
        assert.equal(res.statusCode, 400, query);
        assert.deepEqual(res.json(), { error: 'unknown control path', code: 'invalid_input' });
      }
      // Allowed paths get through to the agent, which is not running here: 502.
      const ok = await dash('GET', `/api/servers/${server.id}/control?path=attacks%2Fblacklist%2Fstatus`);
      assert.equal(ok.statusCode, 502);
      assert.deepEqual(ok.json(), { error: 'agent unreachable', code: 'agent_error' });
      assert.equal((await dash('GET', `/api/servers/${server.id}/control?path=whitelist`, stranger)).statusCode, 404);
      assert.equal((await dash('GET', '/api/servers/abc/control?path=whitelist')).statusCode, 404);
    });

    test('the control proxy needs control.read for GET and control.edit for POST and DELETE', async () => {
      const { server } = await enrolledServer();
      await t.app.services.accounts.setPermission(owner.email, 'control.edit', false);
      const post = await dash('POST', `/api/servers/${server.id}/control?path=whitelist`, owner, { ip: '192.0.2.1' });
      assert.equal(post.statusCode, 403);
      assert.equal(post.json().error, 'this needs the control.edit permission');
      assert.equal(
        (await dash('DELETE', `/api/servers/${server.id}/control?path=whitelist&ip=192.0.2.1`)).statusCode,
        403,
      );
      assert.equal(
        (await dash('GET', `/api/servers/${server.id}/control?path=whitelist`)).statusCode,
        502,
        'read is still allowed',
      );
      await t.app.services.accounts.setPermission(owner.email, 'control.read', false);
      assert.equal((await dash('GET', `/api/servers/${server.id}/control?path=whitelist`)).statusCode, 403);
      await t.app.services.accounts.setPermission(owner.email, 'control.read', true);
      await t.app.services.accounts.setPermission(owner.email, 'control.edit', true);
    });

    test('the metrics proxy answers 502 when the agent cannot be reached', async () => {
      const { server } = await enrolledServer();
      const res = await dash('GET', `/api/servers/${server.id}/metrics`);
      assert.equal(res.statusCode, 502);
      assert.deepEqual(res.json(), { error: 'agent unreachable', code: 'agent_error' });
      assert.equal((await dash('GET', `/api/servers/${server.id}/metrics`, stranger)).statusCode, 404);
    });

    test('adding a server checks the agent first and explains failures', async () => {
      const product = (await t.app.services.catalog.products(owner.id))[0]!;
      const key = generateToken('agentKey');
      const add = (body: Record<string, unknown>) =>
        dash('POST', '/api/servers', owner, {
          product_id: product.id,
          name: 'new',
          api_url: `http://127.0.0.1:${1}`,
          api_key: key,
          ...body,
        });
      const cases: [Record<string, unknown>, number, RegExp][] = [
        [{ api_url: `http://127.0.0.1:${await closedPort()}` }, 400, /^api_url: agent unreachable: connection refused/],
        [{ api_url: 'http://169.254.169.254/' }, 400, /^api_url: forbidden address: .*metadata/],
        [{ api_url: 'http://[::ffff:169.254.169.254]:9100' }, 400, /^api_url: forbidden address/],
        [{ api_url: 'http://224.0.0.1:9100' }, 400, /^api_url: forbidden address: .*multicast/],
        [{ api_url: 'ftp://127.0.0.1/' }, 400, /^api_url: expected an http or https URL/],
        [{ api_key: 'hunter2' }, 400, /^api_key: expected the agent key/],
        [{ product_id: 999999 }, 400, /^product_id: no product with this id/],
        [{ name: '' }, 400, /^name: must not be empty/],
        [{ api_url: undefined }, 400, /^api_url: is required/],
      ];
      for (const [body, status, message] of cases) {
        const res = await add(body);
        assert.equal(res.statusCode, status, `${JSON.stringify(body)} → ${res.body}`);
        assert.match(res.json().error, message);
        assert.ok(!res.body.includes(key), 'the key is never echoed');
      }
      const strangerProduct = await add({ product_id: (await t.app.services.catalog.addProduct(stranger.id, 1)).id });
      assert.equal(strangerProduct.statusCode, 400);
      const count = (await t.app.services.servers.list(owner.id)).length;
      assert.equal(count, (await v1('/api/v1/servers')).json().data.servers.length, 'nothing half-stored');
    });

    test('the connection test reports instead of failing', async () => {
      const res = await dash('POST', '/api/servers/test', owner, {
        api_url: `http://127.0.0.1:${await closedPort()}`,
        api_key: generateToken('agentKey'),
      });
      assert.equal(res.statusCode, 200);
      assert.deepEqual(res.json().data, {
        reachable: false,
        status: null,
        latency_ms: null,
        error: 'agent unreachable: connection refused (is it running, and on that port?)',
      });
      assert.equal((await dash('POST', '/api/servers/test', owner, { server_id: 999999 })).statusCode, 404);
      assert.equal((await dash('POST', '/api/servers/test', owner, { nothing: 1 })).statusCode, 400);
    });
  });
}

describe('the outgoing target policy', () => {
  test('classifies addresses, unmapping IPv4-mapped IPv6', () => {
    const always = [
      '169.254.169.254',
      '::ffff:169.254.169.254',
      'fe80::1',
      '224.0.0.1',
      'ff02::1',
      '0.0.0.0',
      '::',
      '255.255.255.255',
      '100.100.100.200',
    ];
    for (const ip of always) {
      assert.equal(checkAddress(ip, true).ok, false, ip);
      assert.equal(checkAddress(ip, false).ok, false, ip);
    }
    const privateOnes = [
      '10.1.2.3',
      '172.16.0.1',
      '192.168.1.1',
      '100.64.0.1',
      '127.0.0.1',
      '::1',
      'fd12::1',
      '::ffff:10.0.0.1',
      '::ffff:127.0.0.1',
    ];
    for (const ip of privateOnes) {
      assert.equal(checkAddress(ip, false).ok, false, ip);
      assert.equal(checkAddress(ip, true).ok, true, ip);
    }
    for (const ip of ['203.0.113.7', '8.8.8.8', '2001:4860:4860::8888']) {
      assert.equal(checkAddress(ip, false).ok, ['8.8.8.8', '2001:4860:4860::8888'].includes(ip), ip);
    }
  });

  test('a hostname that resolves to a forbidden address is refused at connect time', async () => {
    const t = await testApp('sqlite');
    try {
      await assert.rejects(
        t.app.outbound.request({ method: 'GET', url: 'http://localhost:9/' }),
        (err: Error & { kind?: string }) => {
          assert.equal(err.kind, 'refused');
          assert.match(err.message, /localhost resolves to a forbidden address: .*loopback/);
          return true;
        },
      );
      await assert.rejects(t.app.outbound.checkUrl('http://127.0.0.1:9/'), /loopback address/);
    } finally {
      await t.close();
    }
  });
});
