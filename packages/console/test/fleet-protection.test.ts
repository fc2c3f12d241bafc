import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  dialects,
  enrolledTestServer,
  json,
  registerUser,
  type TestApp,
  type TestUser,
  testApp,
  testSample,
} from './support.js';

/**
 * Fleet policies and lists (docs/protection.md, "Fleet policies"): what the console refuses, and
 * what it makes of the bans agents report in their check-ins. The servers here point at an address
 * the console refuses to call, so every application stays pending with the reason; e2e/
 * fleet-protection.test.ts drives real agents.
 */
for (const dialect of dialects()) {
  describe(`fleet policies and lists (${dialect})`, () => {
    let t: TestApp;
    let owner: TestUser;
    let stranger: TestUser;
    const servers: { serverId: number; daemon: string }[] = [];
    let strangerServer = 0;

    before(async () => {
      t = await testApp(dialect);
      owner = await registerUser(t.app);
      stranger = await registerUser(t.app);
      for (const name of ['web-1', 'web-2', 'db-1'])
        servers.push(await enrolledTestServer(t.app, owner, { name, hostname: null, public_ip: null }));
      await t.db.updateTable('servers').set({ tags: '["web"]' }).where('name', 'in', ['web-1', 'web-2']).execute();
      // A key the console can open, for an address it refuses to call (a private one, not allowed here).
      await t.db
        .updateTable('servers')
        .set({ api_key_enc: t.app.secrets.seal(`agk_${'k'.repeat(40)}`) })
        .execute();
      strangerServer = (await enrolledTestServer(t.app, stranger, { name: 'theirs', hostname: null, public_ip: null }))
        .serverId;
    });
    after(async () => {
      await t.app.services.fleet.settle();
      await t.close();
    });

    const call = (user: TestUser, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, body?: unknown) =>
      t.app.inject({
        method,
        url,
        headers: { cookie: user.cookie, ...(body !== undefined ? json(body).headers : {}) },
        ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
      });
    const checkin = (i: number, bans: unknown[]) =>
      t.app.inject({
        method: 'POST',
        url: '/api/agent/checkin',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${servers[i]!.daemon}` },
        payload: JSON.stringify({
          agent_version: '0.1.0',
          hostname: `host-${i}`,
          facts: { cores: 2 },
          sample: testSample(t.clock.now),
          bans,
        }),
      });
    const ban = (ip: string, kind = 'log_pattern') => ({
      ip,
      kind,
      attack_id: '7',
      pattern: kind === 'log_pattern' ? 'sshd' : null,
      at: t.clock.now,
      ttl_s: 600,
    });

    test('policies: bad input is a 400 naming the field; another account’s product, tag or policy is 404', async () => {
      const cases: [unknown, RegExp][] = [
        [{ name: 'x', trigger: 'sometimes', scope: 'all' }, /^trigger: /],
        [{ name: 'x', trigger: 'any', scope: 'tags' }, /^tags: expected at least one tag/],
        [{ name: 'x', trigger: 'any', scope: 'all', tags: ['web'] }, /^tags: only with scope tags/],
        [{ name: 'x', trigger: 'any', scope: 'product' }, /^product_id: expected a product id/],
        [{ name: '', trigger: 'any', scope: 'all' }, /^name: /],
        [{ name: 'x', trigger: 'any', scope: 'all', duration_s: 0 }, /^duration_s: /],
        [
          { name: 'x', trigger: 'any', scope: 'all', duration_s: 30 * 86_400 + 1 },
          /^duration_s: expected 1 to 2592000/,
        ],
        [{ name: 'x', trigger: 'any', scope: 'all', allow_private: 'yes' }, /^allow_private: expected true or false/],
        [{ name: 'x', trigger: 'any', scope: 'all', extra: 1 }, /extra/],
      ];
      for (const [body, error] of cases) {
        const res = await call(owner, 'POST', '/api/fleet/policies', body);
        assert.equal(res.statusCode, 400, JSON.stringify(body));
        assert.match(res.json().error, error, JSON.stringify(body));
      }
      const theirProduct = (await t.app.services.catalog.products(stranger.id))[0]!.id;
      const product = await call(owner, 'POST', '/api/fleet/policies', {
        name: 'x',
        trigger: 'any',
        scope: 'product',
        product_id: theirProduct,
      });
      assert.deepEqual([product.statusCode, product.json().error], [404, 'product not found']);
      const tag = await call(owner, 'POST', '/api/fleet/policies', {
        name: 'x',
        trigger: 'any',
        scope: 'tags',
        tags: ['nowhere'],
      });
      assert.deepEqual([tag.statusCode, tag.json().error], [404, 'tag "nowhere" not found']);

      const mine = await call(owner, 'POST', '/api/fleet/policies', {
        name: 'mine',
        trigger: 'any',
        scope: 'all',
        enabled: false,
      });
      assert.equal(mine.statusCode, 201);
      const id = mine.json().data.policy.id;
      const body = { name: 'theirs now', trigger: 'any', scope: 'all' };
      assert.equal((await call(stranger, 'PATCH', `/api/fleet/policies/${id}`, body)).statusCode, 404);
      assert.equal((await call(stranger, 'DELETE', `/api/fleet/policies/${id}`)).statusCode, 404);
      assert.deepEqual((await call(stranger, 'GET', '/api/fleet/policies')).json().data.policies, []);
      assert.equal((await call(owner, 'DELETE', `/api/fleet/policies/${id}`)).statusCode, 200);
    });

    test('fleet list entries are read as the agents read them; the fleet whitelist wins', async () => {
      const add = (user: TestUser, body: Record<string, unknown>) =>
        call(user, 'POST', '/api/fleet/entries', { scope: 'all', ...body });
      const bad = await add(owner, { list: 'black', ip: '010.1.1.1' });
      assert.deepEqual([bad.statusCode, bad.json().error], [400, 'ip: "010.1.1.1" is not an IP address or CIDR range']);
      const everything = await add(owner, { list: 'black', ip: '0.0.0.0/0' });
      assert.equal(everything.statusCode, 400);
      assert.match(everything.json().error, /^ip: 0\.0\.0\.0\/0 covers every IPv4 address/);
      assert.equal((await add(owner, { list: 'grey', ip: '192.0.2.1' })).statusCode, 400);

      const white = await add(owner, { list: 'white', ip: '192.0.2.0/24', reason: 'office' });
      assert.equal(white.statusCode, 201, white.body);
      assert.equal(white.json().data.entry.address, '192.0.2.0/24');
      assert.deepEqual(
        white.json().data.entry.counts,
        { applied: 0, pending: 3, failed: 0 },
        'one per server in scope',
      );
      const conflict = await add(owner, { list: 'black', ip: '192.0.2.9' });
      assert.equal(conflict.statusCode, 409);
      assert.match(conflict.json().error, /^ip: 192\.0\.2\.9 is on the fleet whitelist \(192\.0\.2\.0\/24/);
      const black = await add(owner, { list: 'black', ip: '198.51.100.1', ttl_s: 3600 });
      assert.equal(black.statusCode, 201);
      const again = await add(owner, { list: 'black', ip: '198.51.100.1' });
      assert.deepEqual(
        [again.statusCode, again.json().error],
        [409, 'ip: 198.51.100.1 is already on the fleet blacklist'],
      );
      assert.equal(
        (await add(stranger, { list: 'black', ip: '198.51.100.1' })).statusCode,
        201,
        'each account its own',
      );
      const tagged = await add(stranger, { list: 'black', ip: '198.51.100.2', scope: 'tags', tags: ['web'] });
      assert.equal(tagged.statusCode, 404, "the owner's tag is not the stranger's");

      const id = black.json().data.entry.id;
      assert.equal((await call(stranger, 'DELETE', `/api/fleet/entries/${id}`)).statusCode, 404);
      const lifted = await call(owner, 'DELETE', `/api/fleet/entries/${id}`);
      assert.equal(lifted.statusCode, 200);
      assert.ok(lifted.json().data.entry.lifted_at);
      const entries = (await call(owner, 'GET', '/api/fleet/entries')).json().data.entries;
      assert.deepEqual(
        entries.map((e: { address: string }) => e.address),
        ['192.0.2.0/24'],
      );
    });

    test('a reported ban becomes one fleet entry for the other servers in scope, and is never propagated twice', async () => {
      const policy = await call(owner, 'POST', '/api/fleet/policies', {
        name: 'web patterns',
        trigger: 'pattern',
        scope: 'tags',
        tags: ['web'],
      });
      assert.equal(policy.statusCode, 201, policy.body);

      assert.equal((await checkin(0, [ban('203.0.113.50'), ban('203.0.113.51', 'conn_flood')])).statusCode, 200);
      const lookup = await call(owner, 'GET', '/api/fleet/addresses?ip=203.0.113.50');
      assert.equal(lookup.statusCode, 200);
      const [entry] = lookup.json().data.entries;
      assert.equal(entry.origin.server_name, 'web-1');
      assert.equal(entry.origin.event, 'pattern sshd');
      assert.equal(entry.policy_id, policy.json().data.policy.id);
      assert.equal(entry.expires_at, t.clock.now + 600_000);
      assert.deepEqual(
        entry.servers.map((s: { server_name: string; state: string }) => [s.server_name, s.state]),
        [['web-2', 'pending']],
        'only the other server tagged web',
      );
      assert.deepEqual(
        (await call(owner, 'GET', '/api/fleet/addresses?ip=203.0.113.51')).json().data.entries,
        [],
        'an attack ban does not match a pattern policy',
      );

      // The second server reports the same address (as if it had banned it itself), twice, and so
      // does the first: still one entry.
      assert.equal((await checkin(1, [ban('203.0.113.50')])).statusCode, 200);
      assert.equal((await checkin(0, [ban('203.0.113.50')])).statusCode, 200);
      assert.equal((await call(owner, 'GET', '/api/fleet/addresses?ip=203.0.113.50')).json().data.entries.length, 1);
      // The fleet whitelist holds 192.0.2.0/24: a ban there is not propagated.
      assert.equal((await checkin(0, [ban('192.0.2.77')])).statusCode, 200);
      const held = (await call(owner, 'GET', '/api/fleet/addresses?ip=192.0.2.77')).json().data.entries;
      assert.deepEqual(
        held.map((e: { list: string }) => e.list),
        ['white'],
      );
      // A ban from a server outside the scope is not propagated.
      assert.equal((await checkin(2, [ban('203.0.113.60')])).statusCode, 200);
      assert.deepEqual((await call(owner, 'GET', '/api/fleet/addresses?ip=203.0.113.60')).json().data.entries, []);
      assert.deepEqual(
        (await call(stranger, 'GET', '/api/fleet/addresses?ip=203.0.113.50')).json().data.entries,
        [],
        'nobody else sees it',
      );
      assert.equal(strangerServer > 0, true);

      const bad = await checkin(0, [{ ...ban('203.0.113.70'), ttl_s: 0 }]);
      assert.equal(bad.statusCode, 400);
      assert.match(bad.json().error, /^bans\.0\.ttl_s: /);
    });

    test('a server that leaves a policy’s scope is asked to drop what it got from it; one that joins gets it', async () => {
      const [policy] = (await call(owner, 'GET', '/api/fleet/policies'))
        .json()
        .data.policies.filter((p: { name: string }) => p.name === 'web patterns');
      const wants = async () =>
        (await call(owner, 'GET', '/api/fleet/addresses?ip=203.0.113.50'))
          .json()
          .data.entries[0].servers.map((s: { server_name: string; want: string }) => `${s.server_name} ${s.want}`);
      const body = { name: 'web patterns', trigger: 'pattern', duration_s: null, enabled: true };
      assert.equal(
        (await call(owner, 'PATCH', `/api/fleet/policies/${policy.id}`, { ...body, scope: 'all' })).statusCode,
        200,
      );
      assert.deepEqual(await wants(), ['web-2 present', 'db-1 present'], 'db-1 joined the scope');
      const back = await call(owner, 'PATCH', `/api/fleet/policies/${policy.id}`, {
        ...body,
        scope: 'tags',
        tags: ['web'],
      });
      assert.equal(back.statusCode, 200);
      assert.deepEqual(await wants(), ['web-2 present', 'db-1 absent'], 'db-1 left it again');
      const theirs = await call(stranger, 'PATCH', `/api/fleet/policies/${policy.id}`, { ...body, scope: 'all' });
      assert.equal(theirs.statusCode, 404);
    });

    test('an unreachable server stays pending with the reason; lifting takes the address off everywhere', async () => {
      await t.app.services.fleet.settle();
      await t.app.services.fleet.round();
      const [entry] = (await call(owner, 'GET', '/api/fleet/addresses?ip=203.0.113.50')).json().data.entries;
      const [pending] = entry.servers;
      assert.equal(pending.state, 'pending');
      assert.match(pending.reason, /agent address refused/);
      assert.ok(pending.attempts >= 1);
      assert.ok(pending.next_attempt_at > t.clock.now, 'tried again later');

      const bad = await call(owner, 'DELETE', '/api/fleet/addresses?ip=not-an-ip');
      assert.deepEqual([bad.statusCode, bad.json().error], [400, 'ip: "not-an-ip" is not an IP address or CIDR range']);
      const lifted = await call(owner, 'DELETE', '/api/fleet/addresses?ip=203.0.113.50');
      const answer = lifted.json().data;
      assert.deepEqual([answer.lifted, answer.complete], [1, false], 'the servers cannot be reached: not complete');
      assert.deepEqual(
        answer.still_held.map((s: { server_name: string; state: string }) => `${s.server_name} ${s.state}`),
        ['web-1 pending', 'web-2 pending', 'db-1 pending'],
        'the first server (its own ban), the one it was propagated to, and db-1 (asked to drop it when it left the scope)',
      );
      assert.deepEqual((await call(owner, 'GET', '/api/fleet/addresses?ip=203.0.113.50')).json().data.entries, []);

      const audit = (await call(owner, 'GET', '/api/audit?limit=200')).json().data.entries as {
        action: string;
        actor: string;
        summary: string;
      }[];
      assert.ok(audit.some((e) => e.action === 'fleet.entry' && /^fleet policy \d+$/.test(e.actor)));
      assert.ok(audit.some((e) => e.action === 'fleet.entry' && e.summary === 'lifted 203.0.113.50 (blacklist)'));
      assert.ok(audit.some((e) => e.action === 'fleet.policy' && e.actor === owner.email));
    });

    test('a server added later, or retagged, follows the scopes of the entries in force; one that leaves keeps its own', async () => {
      const wants = async (ip: string) =>
        (await call(owner, 'GET', `/api/fleet/addresses?ip=${ip}`))
          .json()
          .data.entries[0].servers.map((s: { server_name: string; want: string }) => `${s.server_name} ${s.want}`);
      const manual = await call(owner, 'POST', '/api/fleet/entries', {
        list: 'black',
        ip: '198.51.100.20',
        scope: 'tags',
        tags: ['web'],
      });
      assert.equal(manual.statusCode, 201, manual.body);
      assert.equal((await checkin(0, [ban('203.0.113.80')])).statusCode, 200, 'web-1 bans; the web policy propagates');
      assert.deepEqual(await wants('198.51.100.20'), ['web-1 present', 'web-2 present']);
      assert.deepEqual(await wants('203.0.113.80'), ['web-2 present']);

      // A server registered through an enrolment token (outbound: the console never calls it here).
      const productId = (await t.app.services.catalog.products(owner.id))[0]!.id;
      const token = (await call(owner, 'POST', '/api/enrolment-tokens', { product_id: productId })).json().data.token;
      const registered = await t.app.inject({
        method: 'POST',
        url: '/api/agent/register',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        payload: JSON.stringify({
          name: 'web-3',
          api_key: `agk_${'n'.repeat(40)}`,
          api_url: 'https://web-3.example.net:9100',
          port: 9100,
          tls: false,
          tls_fingerprint: null,
          version: '0.1.0',
          connect: 'outbound',
        }),
      });
      assert.equal(registered.statusCode, 201, registered.body);
      const web3 = registered.json().data.server_id;
      assert.deepEqual(
        await wants('192.0.2.1'),
        ['web-1 present', 'web-2 present', 'db-1 present', 'web-3 present'],
        'the fleet whitelist (scope all) reaches the new server',
      );
      assert.deepEqual(await wants('198.51.100.20'), ['web-1 present', 'web-2 present'], 'not tagged web yet');

      // Tagged web: it gets the tagged list entry and the policy's entry, pending like the others.
      const tagged = await call(owner, 'PATCH', `/api/servers/${web3}`, { tags: ['web'] });
      assert.equal(tagged.statusCode, 200, tagged.body);
      assert.deepEqual(await wants('198.51.100.20'), ['web-1 present', 'web-2 present', 'web-3 present']);
      assert.deepEqual(
        await wants('203.0.113.80'),
        ['web-2 present', 'web-3 present'],
        'never the server that banned it',
      );
      const [entry] = (await call(owner, 'GET', '/api/fleet/addresses?ip=198.51.100.20')).json().data.entries;
      assert.equal(entry.servers.find((s: { server_id: number }) => s.server_id === web3).state, 'pending');

      // web-2 held 198.51.100.20 of its own before the fleet entry: what the propagator stores when
      // the agent answers `added: false` (e2e/fleet-protection.test.ts has a real agent do it).
      await t.db
        .updateTable('fleet_applications')
        .set({ preexisting: 1 })
        .where('entry_id', '=', entry.id)
        .where('server_id', '=', servers[1]!.serverId)
        .execute();
      const untagged = await call(owner, 'PATCH', `/api/servers/${servers[1]!.serverId}`, { tags: [] });
      assert.equal(untagged.statusCode, 200, untagged.body);
      assert.deepEqual(await wants('198.51.100.20'), ['web-1 present', 'web-2 absent', 'web-3 present']);
      assert.deepEqual(await wants('203.0.113.80'), ['web-2 absent', 'web-3 present']);
      assert.deepEqual(
        await wants('192.0.2.1'),
        ['web-1 present', 'web-2 present', 'db-1 present', 'web-3 present'],
        'still in the whitelist’s scope',
      );
      await t.app.services.fleet.settle();
      await t.app.services.fleet.round();
      const state = async (ip: string) => {
        const [e] = (await call(owner, 'GET', `/api/fleet/addresses?ip=${ip}`)).json().data.entries;
        const app = e.servers.find((s: { server_name: string }) => s.server_name === 'web-2');
        return [app.state, app.reason];
      };
      assert.deepEqual(
        await state('198.51.100.20'),
        ['applied', 'kept: the server held this address before the fleet entry'],
        'its own ban stays',
      );
      const [dropping, why] = await state('203.0.113.80');
      assert.equal(dropping, 'pending', 'the propagated one is taken off (once the server answers)');
      assert.match(why, /agent address refused/);
    });
  });
}
