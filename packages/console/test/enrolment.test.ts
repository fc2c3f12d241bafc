import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { generateToken } from '@palisade/protocol';
import { closedPort } from '@palisade/testkit';
import { dialects, json, registerUser, type TestApp, type TestUser, testApp } from './support.js';

/** Enrolment tokens (docs/api.md, "Enrolment tokens") and the token checks of POST /api/agent/register. */
for (const dialect of dialects()) {
  describe(`enrolment tokens (${dialect})`, () => {
    let t: TestApp;
    let owner: TestUser;
    let stranger: TestUser;
    let productId = 0;

    const as = (user: TestUser) => ({ cookie: user.cookie });
    const create = (user: TestUser, body: unknown) =>
      t.app.inject({
        method: 'POST',
        url: '/api/enrolment-tokens',
        ...json(body),
        headers: { ...json(body).headers, ...as(user) },
      });
    const list = async (user: TestUser) =>
      (await t.app.inject({ method: 'GET', url: '/api/enrolment-tokens', headers: as(user) })).json().data.tokens;
    const register = (token: string | null, body: unknown = {}) =>
      t.app.inject({
        method: 'POST',
        url: '/api/agent/register',
        ...json(body),
        headers: { ...json(body).headers, ...(token ? { authorization: `Bearer ${token}` } : {}) },
      });

    before(async () => {
      t = await testApp(dialect, { PALISADE_ALLOW_PRIVATE_TARGETS: '1', PALISADE_AGENT_TIMEOUT_MS: '2000' });
      owner = await registerUser(t.app);
      stranger = await registerUser(t.app, '127.0.0.2');
      const product = await t.app.inject({
        method: 'POST',
        url: '/api/products',
        ...json({ catalog_id: 1 }),
        headers: { ...json({}).headers, ...as(owner) },
      });
      productId = product.json().data.product.id;
    });
    after(() => t.close());

    test('created once with the install line; listed without the token; only the SHA-256 is stored', async () => {
      const res = await create(owner, { product_id: productId });
      assert.equal(res.statusCode, 201, res.body);
      const made = res.json().data;
      assert.match(made.token, /^enr_[0-9A-Za-z]{38}$/);
      const origin = /^curl -fsSL (\S+)\/install\/agent\.sh/.exec(made.command)?.[1];
      // Saved to a file and run only when the download worked: `curl … | sh` succeeds on a failed download.
      assert.equal(
        made.command,
        `curl -fsSL ${origin}/install/agent.sh -o palisade-install.sh && sudo sh palisade-install.sh --token ${made.token}`,
      );
      assert.equal(made.root_command, made.command.replace('&& sudo sh', '&& sh'), 'the form for a root shell');
      assert.deepEqual([made.max_uses, made.uses, made.state], [1, 0, 'active']);
      assert.equal(made.expires_at, t.clock.now + 3600_000, 'one hour by default');
      const listed = await list(owner);
      assert.equal(listed.length, 1);
      assert.equal(listed[0].token, undefined);
      assert.equal(listed[0].last4, made.token.slice(-4));
      const rows = await t.db.selectFrom('enrolment_tokens').selectAll().execute();
      assert.ok(!JSON.stringify(rows).includes(made.token), 'never the raw token');
      assert.deepEqual(await list(stranger), [], 'another account sees none');
    });

    test('bad input names the field; another account’s product is 400', async () => {
      const cases: [unknown, RegExp][] = [
        [{}, /product_id: is required/],
        [{ product_id: 'x' }, /product_id/],
        [{ product_id: productId, max_uses: 0 }, /max_uses: at least 1/],
        [{ product_id: productId, max_uses: 1.5 }, /max_uses/],
        [{ product_id: productId, expires_at: t.clock.now - 1 }, /expires_at: must be in the future/],
        [{ product_id: productId, expires_at: t.clock.now + 400 * 24 * 3600_000 }, /expires_at: at most one year/],
        [{ product_id: productId, extra: 1 }, /unknown field extra/],
      ];
      for (const [body, message] of cases) {
        const res = await create(owner, body);
        assert.equal(res.statusCode, 400, `${JSON.stringify(body)}: ${res.body}`);
        assert.match(res.json().error, message);
      }
      const foreign = await create(stranger, { product_id: productId });
      assert.equal(foreign.statusCode, 400);
      assert.match(foreign.json().error, /^product_id: no product with this id on your account/);
    });

    test('refused tokens: 401 naming unknown, revoked, expired or used up, before the body is read', async () => {
      for (const raw of [null, 'enr_nope', generateToken('enrolment'), generateToken('daemon')]) {
        const res = await register(raw);
        assert.equal(res.statusCode, 401, String(raw));
        assert.equal(res.json().reason, 'unknown');
        assert.match(res.json().error, /^enrolment token unknown/);
      }
      const revoked = (await create(owner, { product_id: productId, max_uses: 3 })).json().data;
      const gone = await t.app.inject({
        method: 'DELETE',
        url: `/api/enrolment-tokens/${revoked.id}`,
        headers: as(owner),
      });
      assert.equal(gone.statusCode, 200);
      assert.equal((await register(revoked.token)).json().reason, 'revoked');
      assert.equal(
        (await t.app.inject({ method: 'DELETE', url: `/api/enrolment-tokens/${revoked.id}`, headers: as(stranger) }))
          .statusCode,
        404,
        'another account’s token is not found',
      );

      const short = (await create(owner, { product_id: productId, expires_at: t.clock.now + 60_000 })).json().data;
      t.clock.advance(60_000);
      const expired = await register(short.token);
      assert.deepEqual([expired.statusCode, expired.json().reason], [401, 'expired']);

      const single = (await create(owner, { product_id: productId })).json().data;
      await t.db.updateTable('enrolment_tokens').set({ uses: 1 }).where('id', '=', single.id).execute();
      const used = await register(single.token);
      assert.deepEqual([used.statusCode, used.json().reason], [401, 'used_up']);
      const states = Object.fromEntries((await list(owner)).map((x: { id: number; state: string }) => [x.id, x.state]));
      assert.deepEqual([states[revoked.id], states[short.id], states[single.id]], ['revoked', 'expired', 'used_up']);
    });

    test('a good token: the body is checked (400 naming the field), then the agent (400 api_url); no use is counted', async () => {
      const made = (await create(owner, { product_id: productId })).json().data;
      const empty = await register(made.token);
      assert.equal(empty.statusCode, 400);
      assert.match(empty.json().error, /^body\.name: is required|name/);
      const body = {
        name: 'web-1',
        api_key: generateToken('agentKey'),
        api_url: null,
        port: await closedPort(),
        tls: false,
        tls_fingerprint: null,
        version: '0.1.0',
      };
      const tlsWithoutPin = await register(made.token, { ...body, tls: true });
      assert.equal(tlsWithoutPin.statusCode, 400);
      assert.match(tlsWithoutPin.json().error, /tls_fingerprint: is required when tls is true/);
      // Derived from the request's source address (127.0.0.1 here) and the port: nobody listens there.
      const unreachable = await register(made.token, body);
      assert.equal(unreachable.statusCode, 400, unreachable.body);
      assert.match(unreachable.json().error, /^api_url: agent unreachable: connection refused/);
      const listed = (await list(owner)).find((x: { id: number }) => x.id === made.id);
      assert.deepEqual([listed.uses, listed.state], [0, 'active'], 'a failed registration does not use the token');
      const servers = await t.app.inject({ method: 'GET', url: '/api/servers', headers: as(owner) });
      assert.deepEqual(servers.json().data.servers, [], 'nothing half-stored');
    });

    test('connect: auto registers an agent the console cannot reach as outbound; outbound is not asked at all', async () => {
      const body = {
        name: 'behind-nat',
        api_key: generateToken('agentKey'),
        api_url: null,
        port: await closedPort(),
        tls: false,
        tls_fingerprint: null,
        version: '0.1.0',
      };
      const badMode = await register((await create(owner, { product_id: productId })).json().data.token, {
        ...body,
        connect: 'sideways',
      });
      assert.equal(badMode.statusCode, 400);
      assert.match(badMode.json().error, /connect: expected direct, outbound, auto/);

      const auto = await register((await create(owner, { product_id: productId })).json().data.token, {
        ...body,
        connect: 'auto',
      });
      assert.equal(auto.statusCode, 201, auto.body);
      assert.equal(auto.json().data.connect, 'outbound');
      const page = await t.app.inject({
        method: 'GET',
        url: `/api/servers/${auto.json().data.server_id}`,
        headers: as(owner),
      });
      assert.deepEqual(
        page.json().data.server.connection,
        { mode: 'outbound', link: 'down', since: null },
        'outbound before its link first comes up',
      );

      // `outbound` never calls the address: a listener there sees nothing.
      let asked = 0;
      const listener = http.createServer((req, res) => {
        asked += 1;
        req.resume();
        res.writeHead(500).end();
      });
      await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
      const outbound = await register((await create(owner, { product_id: productId })).json().data.token, {
        ...body,
        name: 'told-outbound',
        port: (listener.address() as AddressInfo).port,
        connect: 'outbound',
      });
      await new Promise((resolve) => listener.close(resolve));
      assert.equal(outbound.statusCode, 201, outbound.body);
      assert.equal(outbound.json().data.connect, 'outbound');
      assert.equal(asked, 0);
      const row = await t.db
        .selectFrom('servers')
        .select(['connect', 'agent_version'])
        .where('id', '=', outbound.json().data.server_id)
        .executeTakeFirstOrThrow();
      assert.deepEqual(row, { connect: 'outbound', agent_version: '0.1.0' });
    });
  });
}
