import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  accountSchema,
  benchmarkRunSchema,
  hashToken,
  serverDetailSchema,
  serverSummarySchema,
} from '@palisade/protocol';
import {
  createToken,
  dialects,
  insertTestServer,
  joinTeam,
  json,
  registerUser,
  type TestApp,
  type TestUser,
  testApp,
} from './support.js';

const ODD_IDS = ['abc', '-1', '1e3', '9999999999999999999', '0', '01', '1.5', '%20', '0x10'];

for (const dialect of dialects()) {
  describe(`personal access tokens and the v1 API (${dialect})`, () => {
    let t: TestApp;
    let alice: TestUser;
    let bob: TestUser;
    let aliceToken: string;
    before(async () => {
      t = await testApp(dialect);
      alice = await registerUser(t.app);
      bob = await registerUser(t.app);
      aliceToken = await createToken(t.app, alice, 'laptop');
    });
    after(() => t.close());

    const v1 = (url: string, token?: string, headers: Record<string, string> = {}) =>
      t.app.inject({
        method: 'GET',
        url,
        headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
      });

    test('a token is shown once, listed by name and last 4, and stored only as a hash', async () => {
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/tokens',
        headers: { cookie: alice.cookie, 'content-type': 'application/json' },
        payload: JSON.stringify({ name: 'deploy' }),
      });
      assert.equal(res.statusCode, 201);
      const created = res.json().data;
      assert.match(created.token, /^svc_[0-9A-Za-z]{38}$/);
      assert.equal(created.name, 'deploy');
      assert.equal(created.last4, created.token.slice(-4));
      const list = await t.app.inject({ method: 'GET', url: '/api/tokens', headers: { cookie: alice.cookie } });
      const listed = list.json().data.tokens.find((x: { id: number }) => x.id === created.id);
      assert.deepEqual(Object.keys(listed).sort(), ['created_at', 'id', 'last4', 'last_used_at', 'name']);
      assert.ok(!list.body.includes(created.token));
      const rows = await t.db.selectFrom('access_tokens').selectAll().where('id', '=', created.id).execute();
      assert.equal(rows[0]?.token_hash, hashToken(created.token));
      assert.ok(!JSON.stringify(rows).includes(created.token.slice(4, -4)), 'the raw token is not stored');
    });

    test('token names are validated', async () => {
      for (const [body, msg] of [
        [{}, 'name: is required'],
        [{ name: '' }, 'name: must not be empty'],
        [{ name: 'x'.repeat(101) }, 'name: at most 100 characters'],
        [{ name: 7 }, /^name: /],
      ] as const) {
        const res = await t.app.inject({
          method: 'POST',
          url: '/api/tokens',
          headers: { cookie: alice.cookie, 'content-type': 'application/json' },
          payload: JSON.stringify(body),
        });
        assert.equal(res.statusCode, 400);
        if (typeof msg === 'string') assert.equal(res.json().error, msg);
        else assert.match(res.json().error, msg);
      }
    });

    test('token routes need a session', async () => {
      assert.equal((await t.app.inject({ method: 'GET', url: '/api/tokens' })).statusCode, 401);
      assert.equal(
        (await t.app.inject({ method: 'GET', url: '/api/tokens', headers: { authorization: `Bearer ${aliceToken}` } }))
          .statusCode,
        401,
      );
    });

    test('GET /api/v1/me answers the account fields and the team the token acts in, with the role there', async () => {
      const res = await v1('/api/v1/me', aliceToken);
      assert.equal(res.statusCode, 200);
      assert.equal(res.headers['cache-control'], 'no-store');
      const data = res.json().data;
      assert.deepEqual(Object.keys(data).sort(), ['email', 'id', 'name', 'role', 'team']);
      accountSchema.strict().parse(data);
      const teams = await t.app.inject({ method: 'GET', url: '/api/teams', headers: { cookie: alice.cookie } });
      const aliceTeam = teams.json().data.teams[0].id;
      assert.deepEqual(data, {
        id: alice.id,
        name: 'Test User',
        email: alice.email,
        role: 'user',
        team: { id: aliceTeam, name: 'Test User', role: 'owner' },
      });
      // A token Carol makes while acting in Alice's team as a viewer: that team, her role there.
      const carol = await registerUser(t.app);
      await joinTeam(t, aliceTeam, carol, 'viewer');
      const made = await t.app.inject({
        method: 'POST',
        url: '/api/tokens',
        headers: { cookie: carol.cookie, 'x-palisade-team': String(aliceTeam), 'content-type': 'application/json' },
        payload: JSON.stringify({ name: 'in alice' }),
      });
      assert.equal(made.statusCode, 201, made.body);
      const carols = (await v1('/api/v1/me', made.json().data.token)).json().data;
      assert.deepEqual([carols.id, carols.team], [carol.id, { id: aliceTeam, name: 'Test User', role: 'viewer' }]);
      const session = await t.app.inject({
        method: 'GET',
        url: '/api/account/me',
        headers: { cookie: carol.cookie, 'x-palisade-team': String(aliceTeam) },
      });
      assert.deepEqual(session.json().data.team, { id: aliceTeam, name: 'Test User', role: 'viewer' });
    });

    test('missing, malformed, unknown and cookie-only credentials answer 401 with no-store', async () => {
      const forged = `svc_${'A'.repeat(38)}`;
      const cases = [
        await v1('/api/v1/me'),
        await v1('/api/v1/me', 'garbage'),
        await v1('/api/v1/me', forged),
        await v1(
          '/api/v1/me',
          aliceToken.replace(/.$/, (c) => (c === 'a' ? 'b' : 'a')),
        ),
        await v1('/api/v1/me', undefined, { cookie: alice.cookie }),
        await v1('/api/v1/me', undefined, { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` }),
        await v1('/api/v1/servers', undefined, { authorization: 'Bearer' }),
      ];
      for (const res of cases) {
        assert.equal(res.statusCode, 401, res.body);
        assert.equal(res.headers['cache-control'], 'no-store');
        assert.equal(typeof res.json().error, 'string');
        assert.deepEqual(Object.keys(res.json()), ['error']);
      }
    });

    test('the server list holds exactly the account’s servers, in the spec’s shape', async () => {
      const a1 = await insertTestServer(t.app, alice, { name: 'alpha', last_seen: t.clock.now - 30_000 });
      const a2 = await insertTestServer(t.app, alice, { name: 'beta', hostname: null, public_ip: null });
      await insertTestServer(t.app, bob, { name: 'bobs' });
      const res = await v1('/api/v1/servers', aliceToken);
      assert.equal(res.statusCode, 200);
      const { servers } = res.json().data;
      assert.deepEqual(
        servers.map((s: { id: number }) => s.id),
        [a1.id, a2.id],
      );
      for (const s of servers) {
        serverSummarySchema.strict().parse(s);
      }
      const alpha = servers[0];
      assert.equal(alpha.label, 'alpha');
      assert.equal(alpha.online, true);
      assert.equal(alpha.last_seen, t.clock.now - 30_000);
      const beta = servers[1];
      assert.equal(beta.online, false);
      assert.equal(beta.score, 0);
      assert.equal(beta.last_seen, 0);
      assert.equal(beta.public_ip, null);
      assert.equal(beta.hostname, 'beta', 'the name stands in until the agent reports its hostname, not the address');
      // The dashboard's list is the v1 summary plus the state fields (docs/fleet.md, "Server states").
      const v1Part = (list: Record<string, unknown>[]) =>
        list.map((s) => Object.fromEntries(Object.keys(servers[0]).map((k) => [k, s[k]])));
      const dashboard = await t.app.inject({ method: 'GET', url: '/api/servers', headers: { cookie: alice.cookie } });
      assert.deepEqual(v1Part(dashboard.json().data.servers), servers, 'the dashboard sees the same servers');
      assert.deepEqual(
        dashboard.json().data.servers.map((s: { state: string }) => s.state),
        ['online', 'offline'],
      );
      const viaToken = await t.app.inject({
        method: 'GET',
        url: '/api/servers',
        headers: { authorization: `Bearer ${aliceToken}` },
      });
      assert.deepEqual(v1Part(viaToken.json().data.servers), servers, 'the token form works on /api/servers');
    });

    test('server detail carries the summary plus facts, score parts, notes and the latest sample', async () => {
      const sample = { ts: t.clock.now - 10_000, cpu_pct: 12.5, mem_used_mb: 900, mem_total_mb: 2000 };
      const server = await insertTestServer(t.app, alice, {
        name: 'gamma',
        last_seen: t.clock.now - 10_000,
        latest_sample: sample,
        score_base: {
          components: { cpu: 200, memory: 200, disk: 100, network: 150, stability: 150 },
          notes: ['Disk / at 86% used'],
        },
      });
      const res = await v1(`/api/v1/servers/${server.id}`, aliceToken);
      assert.equal(res.statusCode, 200);
      const detail = serverDetailSchema.strict().parse(res.json().data);
      assert.equal(detail.score, 950);
      assert.deepEqual(detail.score_components, {
        cpu: 200,
        memory: 200,
        disk: 100,
        network: 150,
        stability: 150,
        freshness: 150,
      });
      assert.deepEqual(detail.score_notes, ['Disk / at 86% used']);
      assert.deepEqual(detail.latest_sample, sample);
      assert.deepEqual(detail.facts, { os: 'Debian 12', kernel: '6.1.0', cores: 2 });
      assert.equal(detail.created_at, t.clock.now);
      assert.ok(!res.body.includes('api_key'), 'the agent key never leaves the console');
    });

    test('another account’s server and unknown ids of every shape answer 404 alike', async () => {
      const bobs = await insertTestServer(t.app, bob, { name: 'hidden' });
      const answers = [];
      for (const url of [
        `/api/v1/servers/${bobs.id}`,
        `/api/v1/servers/${bobs.id}/benchmarks`,
        '/api/v1/servers/999999',
        '/api/v1/servers/999999/benchmarks',
      ]) {
        answers.push(await v1(url, aliceToken));
      }
      for (const id of ODD_IDS)
        answers.push(
          await v1(`/api/v1/servers/${id}`, aliceToken),
          await v1(`/api/v1/servers/${id}/benchmarks`, aliceToken),
        );
      for (const res of answers) {
        assert.equal(res.statusCode, 404, res.body);
        assert.equal(res.json().error, 'server not found');
        assert.equal(res.headers['cache-control'], 'no-store');
      }
      const dashboard = await t.app.inject({
        method: 'GET',
        url: `/api/servers/${bobs.id}`,
        headers: { cookie: alice.cookie },
      });
      assert.equal(dashboard.statusCode, 404);
    });

    test('benchmarks list only finished runs, newest first, without log or token', async () => {
      const server = await insertTestServer(t.app, alice, { name: 'bench' });
      const run = (
        label: string,
        status: 'pending' | 'running' | 'done' | 'failed',
        finished: number | null,
        scores: (number | null)[],
      ) =>
        t.db
          .insertInto('benchmark_runs')
          .values({
            server_id: server.id,
            label,
            status,
            token_hash: hashToken(`${label}-${Math.random()}`),
            log: 'secret log line',
            score_cpu: scores[0] ?? null,
            score_disk: scores[1] ?? null,
            score_network: scores[2] ?? null,
            score_stability: scores[3] ?? null,
            score_total: scores[4] ?? null,
            verified: label === 'new' ? 1 : 0,
            checks: '[]',
            hardware: '{}',
            error: null,
            created_at: t.clock.now,
            started_at: null,
            finished_at: finished,
            updated_at: t.clock.now,
          })
          .returning('id')
          .executeTakeFirstOrThrow();
      const old = await run('old', 'done', t.clock.now - 5000, [50, 60, null, 70, 60]);
      const newer = await run('new', 'done', t.clock.now - 1000, [90, 80, 70, 60, 75]);
      await run('waiting', 'pending', null, []);
      await run('busy', 'running', null, []);
      await run('broken', 'failed', t.clock.now, []);
      const res = await v1(`/api/v1/servers/${server.id}/benchmarks`, aliceToken);
      assert.equal(res.statusCode, 200);
      const { benchmarks } = res.json().data;
      assert.deepEqual(
        benchmarks.map((b: { id: number }) => b.id),
        [newer.id, old.id],
      );
      for (const b of benchmarks) benchmarkRunSchema.strict().parse(b);
      assert.deepEqual(benchmarks[1], {
        id: old.id,
        label: 'old',
        status: 'done',
        scores: { cpu: 50, disk: 60, network: null, stability: 70, total: 60 },
        verified: false,
        finished_at: t.clock.now - 5000,
      });
      assert.equal(benchmarks[0].verified, true);
      assert.ok(!res.body.includes('secret log line'));
    });

    test('the OpenAPI description is public, 3.1, and names the four v1 routes', async () => {
      const res = await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' });
      assert.equal(res.statusCode, 200);
      assert.equal(res.headers['cache-control'], 'no-store');
      const doc = res.json();
      assert.equal(doc.openapi, '3.1.0');
      assert.deepEqual(Object.keys(doc.paths).sort(), [
        '/api/v1/me',
        '/api/v1/servers',
        '/api/v1/servers/{id}',
        '/api/v1/servers/{id}/benchmarks',
      ]);
    });

    test('the v1 routes ignore the session cookie and refuse writes', async () => {
      const res = await t.app.inject({ method: 'GET', url: '/api/v1/servers', headers: { cookie: alice.cookie } });
      assert.equal(res.statusCode, 401);
      const write = await t.app.inject({
        method: 'POST',
        url: '/api/v1/servers',
        headers: { authorization: `Bearer ${aliceToken}` },
        ...json({}),
      });
      assert.equal(write.statusCode, 404);
    });

    test('last_used_at moves at most once a minute', async () => {
      const user = await registerUser(t.app);
      const token = await createToken(t.app, user);
      const lastUsed = async () =>
        (
          await t.db
            .selectFrom('access_tokens')
            .select('last_used_at')
            .where('token_hash', '=', hashToken(token))
            .executeTakeFirstOrThrow()
        ).last_used_at;
      assert.equal(await lastUsed(), null);
      await v1('/api/v1/me', token);
      const first = await lastUsed();
      assert.equal(first, t.clock.now);
      t.clock.advance(30_000);
      await v1('/api/v1/me', token);
      assert.equal(await lastUsed(), first, 'unchanged within the minute');
      t.clock.advance(31_000);
      await v1('/api/v1/me', token);
      assert.equal(await lastUsed(), t.clock.now);
    });

    test('the uses of many tokens at once are each recorded, and none is written twice in a minute', async () => {
      const user = await registerUser(t.app);
      const tokens = await Promise.all(Array.from({ length: 12 }, (_, i) => createToken(t.app, user, `many-${i}`)));
      const lastUsed = async () =>
        new Map(
          (
            await t.db
              .selectFrom('access_tokens')
              .select(['token_hash', 'last_used_at'])
              .where('token_hash', 'in', tokens.map(hashToken))
              .execute()
          ).map((r) => [r.token_hash, r.last_used_at]),
        );
      // Each token three times, all in flight together: one recorded use each, at this clock.
      const answers = await Promise.all(tokens.flatMap((token) => [1, 2, 3].map(() => v1('/api/v1/me', token))));
      assert.deepEqual(
        answers.map((r) => r.statusCode),
        answers.map(() => 200),
      );
      const first = t.clock.now;
      assert.deepEqual(
        [...(await lastUsed()).values()],
        tokens.map(() => first),
      );
      t.clock.advance(61_000);
      await Promise.all(tokens.slice(0, 6).map((token) => v1('/api/v1/me', token)));
      const now = await lastUsed();
      assert.deepEqual(
        tokens.map((token) => now.get(hashToken(token))),
        tokens.map((_, i) => (i < 6 ? t.clock.now : first)),
        'only the tokens used past their minute are written again',
      );
    });

    test('a revoked token stops working; revoking another account’s token is a 404', async () => {
      const user = await registerUser(t.app);
      const token = await createToken(t.app, user);
      const id = (await t.app.inject({ method: 'GET', url: '/api/tokens', headers: { cookie: user.cookie } })).json()
        .data.tokens[0].id;
      const foreign = await t.app.inject({
        method: 'DELETE',
        url: `/api/tokens/${id}`,
        headers: { cookie: bob.cookie },
      });
      assert.equal(foreign.statusCode, 404);
      assert.equal((await v1('/api/v1/me', token)).statusCode, 200);
      const revoked = await t.app.inject({
        method: 'DELETE',
        url: `/api/tokens/${id}`,
        headers: { cookie: user.cookie },
      });
      assert.equal(revoked.statusCode, 200);
      assert.equal((await v1('/api/v1/me', token)).statusCode, 401);
      for (const odd of ODD_IDS) {
        const res = await t.app.inject({
          method: 'DELETE',
          url: `/api/tokens/${odd}`,
          headers: { cookie: user.cookie },
        });
        assert.equal(res.statusCode, 404);
      }
    });

    test('tokens of a disabled account stop working at once', async () => {
      const user = await registerUser(t.app);
      const token = await createToken(t.app, user);
      assert.equal((await v1('/api/v1/me', token)).statusCode, 200);
      await t.app.services.accounts.setDisabled(user.email, true);
      assert.equal((await v1('/api/v1/me', token)).statusCode, 401);
      assert.equal(
        (await t.app.inject({ method: 'GET', url: '/api/servers', headers: { authorization: `Bearer ${token}` } }))
          .statusCode,
        401,
      );
    });

    test('120 requests a minute per token, then 429 with Retry-After and rate-limit headers', async () => {
      const user = await registerUser(t.app);
      const token = await createToken(t.app, user, 'one');
      const other = await createToken(t.app, user, 'two');
      for (let i = 1; i <= 120; i += 1) {
        const res = await v1('/api/v1/me', token);
        assert.equal(res.statusCode, 200, `request ${i}`);
        assert.equal(res.headers['x-ratelimit-limit'], '120');
        assert.equal(res.headers['x-ratelimit-remaining'], String(120 - i));
      }
      const limited = await v1('/api/v1/servers', token);
      assert.equal(limited.statusCode, 429);
      assert.equal(limited.headers['cache-control'], 'no-store');
      const retry = Number(limited.headers['retry-after']);
      assert.ok(retry >= 1 && retry <= 60, `Retry-After ${retry}`);
      assert.equal(limited.headers['x-ratelimit-remaining'], '0');
      assert.ok(Number(limited.headers['x-ratelimit-reset']) > Math.floor(t.clock.now / 1000));
      assert.equal(typeof limited.json().error, 'string');
      assert.equal((await v1('/api/v1/me', other)).statusCode, 200, 'each token has its own budget');
    });
  });
}
