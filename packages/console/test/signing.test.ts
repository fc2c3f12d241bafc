import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { hashToken, signRequest, svc1Payload, svc1Signature } from '@palisade/protocol';
import { dialects, insertTestServer, json, registerUser, type TestApp, type TestUser, testApp } from './support.js';

for (const dialect of dialects()) {
  describe(`SVC1 signed requests and signing keys (${dialect})`, () => {
    let t: TestApp;
    let user: TestUser;
    let key = '';
    let productId = 0;
    before(async () => {
      t = await testApp(dialect);
      user = await registerUser(t.app);
      const created = await t.app.inject({
        method: 'POST',
        url: '/api/keys',
        headers: { cookie: user.cookie, 'content-type': 'application/json' },
        payload: '{"name":"ci"}',
      });
      assert.equal(created.statusCode, 201);
      key = created.json().data.key;
      productId = (await t.app.services.catalog.addProduct(user.id, 1)).id;
    });
    after(() => t.close());

    const nowS = () => Math.floor(t.clock.now / 1000);
    /** Sends a request signed over `signedBody` while sending `sentBody` (they differ only in tampering tests). */
    const signed = (
      method: 'GET' | 'POST',
      url: string,
      options: {
        body?: string;
        signedBody?: string;
        headers?: Record<string, string>;
        signKey?: string;
        timestamp?: number;
        nonce?: string;
      } = {},
    ) => {
      const headers = signRequest({
        key: options.signKey ?? key,
        method,
        path: url.split('?')[0]!,
        body: options.signedBody ?? options.body ?? '',
        timestamp: options.timestamp ?? nowS(),
        ...(options.nonce ? { nonce: options.nonce } : {}),
      });
      return t.app.inject({
        method,
        url,
        headers: {
          ...headers,
          ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
          ...options.headers,
        },
        ...(options.body !== undefined ? { payload: options.body } : {}),
      });
    };
    const events = async () =>
      (await t.app.inject({ method: 'GET', url: '/api/security/events', headers: { cookie: user.cookie } })).json().data
        .events;

    test('signing keys are shown once, listed by last 4, stored as a hash, and revocable', async () => {
      assert.match(key, /^svck_[0-9A-Za-z]{38}$/);
      const list = await t.app.inject({ method: 'GET', url: '/api/keys', headers: { cookie: user.cookie } });
      const listed = list.json().data.keys[0];
      assert.deepEqual(Object.keys(listed).sort(), ['created_at', 'id', 'last4', 'last_used_at', 'name']);
      assert.equal(listed.last4, key.slice(-4));
      const row = await t.db
        .selectFrom('signing_keys')
        .selectAll()
        .where('id', '=', listed.id)
        .executeTakeFirstOrThrow();
      assert.equal(row.key_hash, hashToken(key));
      assert.ok(!JSON.stringify(row).includes(key.slice(5, -4)));
    });

    test('every signed-capable route accepts a signed request', async () => {
      const server = await insertTestServer(t.app, user);
      for (const url of [
        '/api/servers',
        `/api/servers/${server.id}`,
        '/api/products',
        '/api/billing/summary',
        '/api/account/me',
        '/api/tickets',
      ]) {
        const res = await signed('GET', url);
        assert.equal(res.statusCode, 200, `${url}: ${res.body}`);
      }
      const body = JSON.stringify({ product_id: productId, subject: 'Signed ticket', message: 'Opened by a program' });
      const opened = await signed('POST', '/api/tickets', { body });
      assert.equal(opened.statusCode, 201, opened.body);
      const ticket = opened.json().data.ticket;
      assert.match(ticket.ref, /^T-[2-9A-HJ-NP-Z]{6}$/);
      assert.equal((await signed('GET', `/api/tickets/${ticket.id}`)).statusCode, 200);
      assert.equal(
        (await signed('POST', `/api/tickets/${ticket.id}/messages`, { body: '{"message":"more"}' })).statusCode,
        201,
      );
      assert.equal((await signed('POST', `/api/tickets/${ticket.id}/close`, { body: '{}' })).statusCode, 200);
      assert.equal((await signed('POST', `/api/tickets/${ticket.id}/reopen`, { body: '{}' })).statusCode, 200);
      // Cookies keep working on the same routes.
      assert.equal(
        (await t.app.inject({ method: 'GET', url: '/api/tickets', headers: { cookie: user.cookie } })).statusCode,
        200,
      );
    });

    test('routes that are not signed-capable refuse signed headers with 401', async () => {
      for (const [method, url] of [
        ['GET', '/api/tokens'],
        ['GET', '/api/keys'],
        ['POST', '/api/servers/test'],
        ['GET', '/api/security/events'],
      ] as const) {
        const res = await signed(method, url, method === 'POST' ? { body: '{}' } : {});
        assert.equal(res.statusCode, 401, url);
        assert.deepEqual(res.json(), {
          error: 'this route does not accept signed requests',
          code: 'signature_refused',
          reason: 'bad_signature',
        });
      }
    });

    test('each failure reason is answered with 401 and recorded in the security event stream', async () => {
      const ts = nowS();
      const base = signRequest({ key, method: 'GET', path: '/api/account/me', body: '', timestamp: ts });
      const send = (headers: Record<string, string>) =>
        t.app.inject({ method: 'GET', url: '/api/account/me', headers });
      const without = (name: string) => Object.fromEntries(Object.entries(base).filter(([k]) => k !== name));
      const cases: [string, Promise<Awaited<ReturnType<typeof send>>>][] = [
        ['missing', send(without('x-svc-key'))],
        ['missing', send(without('x-svc-timestamp'))],
        ['missing', send(without('x-svc-signature-version'))],
        ['missing', send(without('x-svc-signature'))],
        ['missing', send(without('x-svc-nonce'))],
        ['bad_version', send({ ...base, 'x-svc-signature-version': '2' })],
        ['stale', signed('GET', '/api/account/me', { timestamp: ts - 301 })],
        ['future', signed('GET', '/api/account/me', { timestamp: ts + 301 })],
        ['bad_signature', send({ ...base, 'x-svc-signature': '0'.repeat(64) })],
        ['bad_signature', signed('GET', '/api/account/me', { signKey: `svck_${'A'.repeat(38)}` })],
        ['bad_signature', signed('GET', '/api/products')], // signed for another path… sent to the path it was signed for; see below
      ];
      // The last case must be a mismatch: sign /api/products but send to /api/account/me.
      const otherPath = signRequest({ key, method: 'GET', path: '/api/products', body: '', timestamp: ts });
      cases[cases.length - 1] = ['bad_signature', send(otherPath)];
      for (const [reason, pending] of cases) {
        const res = await pending;
        assert.equal(res.statusCode, 401, `${reason}: ${res.body}`);
        assert.equal(res.json().reason, reason);
        assert.equal(typeof res.json().error, 'string');
      }
      const ok = await send(base);
      assert.equal(ok.statusCode, 200);
      const replay = await send(base);
      assert.equal(replay.statusCode, 401);
      assert.equal(replay.json().reason, 'replay');

      const stream = await events();
      const mine = stream.filter((e: { kind: string }) => e.kind === 'signed_request_failed');
      assert.ok(mine.some((e: { reason: string }) => e.reason === 'replay'));
      const replayEvent = mine.find((e: { reason: string }) => e.reason === 'replay');
      assert.deepEqual(Object.keys(replayEvent).sort(), [
        'created_at',
        'id',
        'ip',
        'key_last4',
        'kind',
        'method',
        'path',
        'reason',
      ]);
      assert.equal(replayEvent.key_last4, key.slice(-4));
      assert.equal(replayEvent.method, 'GET');
      assert.equal(replayEvent.path, '/api/account/me');
      assert.equal(replayEvent.ip, '127.0.0.1');
      assert.ok(
        mine.some((e: { reason: string }) => e.reason === 'bad_signature'),
        'a mismatch with a known key lands on its account',
      );
    });

    test('a failure with a key that exists lands on its account stream with its reason, whatever the reason', async () => {
      const mine = await registerUser(t.app);
      const own = (
        await t.app.inject({
          method: 'POST',
          url: '/api/keys',
          headers: { cookie: mine.cookie, 'content-type': 'application/json' },
          payload: '{"name":"events"}',
        })
      ).json().data.key as string;
      const ts = nowS();
      const base = signRequest({ key: own, method: 'GET', path: '/api/account/me', body: '', timestamp: ts });
      const send = (headers: Record<string, string>) =>
        t.app.inject({ method: 'GET', url: '/api/account/me', headers });
      const { 'x-svc-nonce': _n, ...noNonce } = base;
      assert.equal((await send(noNonce)).json().reason, 'missing');
      assert.equal((await send({ ...base, 'x-svc-signature-version': '2' })).json().reason, 'bad_version');
      assert.equal(
        (await signed('GET', '/api/account/me', { signKey: own, timestamp: ts - 301 })).json().reason,
        'stale',
      );
      assert.equal(
        (await signed('GET', '/api/account/me', { signKey: own, timestamp: ts + 301 })).json().reason,
        'future',
      );
      assert.equal((await signed('GET', '/api/tokens', { signKey: own })).json().reason, 'bad_signature');
      const stream = (
        await t.app.inject({ method: 'GET', url: '/api/security/events', headers: { cookie: mine.cookie } })
      ).json().data.events as { kind: string; reason: string; key_last4: string }[];
      const reasons = stream.filter((e) => e.kind === 'signed_request_failed').map((e) => e.reason);
      assert.deepEqual(reasons.sort(), ['bad_signature', 'bad_version', 'future', 'missing', 'stale']);
      assert.ok(stream.every((e) => e.key_last4 === own.slice(-4)));
    });

    test('a captured signed write re-sent with new nonces is refused as a replay and stored once', async () => {
      const opened = await signed('POST', '/api/tickets', {
        body: JSON.stringify({ product_id: productId, subject: 'Replay target', message: 'first' }),
      });
      const ticketId = opened.json().data.ticket.id as number;
      const path = `/api/tickets/${ticketId}/messages`;
      const body = '{"message":"only once"}';
      const first = await signed('POST', path, { body, nonce: 'x-1' });
      assert.equal(first.statusCode, 201);
      for (const nonce of ['x-2', 'x-3']) {
        const again = await signed('POST', path, { body, nonce });
        assert.equal(again.statusCode, 401);
        assert.equal(again.json().reason, 'replay');
        assert.match(again.json().error, /already accepted/);
      }
      const thread = await signed('GET', `/api/tickets/${ticketId}`);
      const bodies = thread.json().data.ticket.messages.map((m: { body: string }) => m.body);
      assert.equal(bodies.filter((b: string) => b === 'only once').length, 1);
      // The same write a second later is a new signature and is accepted.
      t.clock.advance(1000);
      assert.equal((await signed('POST', path, { body, nonce: 'x-4' })).statusCode, 201);
      // Identical reads, each with its own nonce, stay legitimate.
      assert.equal((await signed('GET', path.replace('/messages', ''), { nonce: 'r-1' })).statusCode, 200);
      assert.equal((await signed('GET', path.replace('/messages', ''), { nonce: 'r-2' })).statusCode, 200);
      const events = (await t.db.selectFrom('security_events').selectAll().where('reason', '=', 'replay').execute())
        .length;
      assert.ok(events >= 2, 'replays are recorded');
    });

    test('the exact body bytes are signed: a body re-serialized after signing fails', async () => {
      const signedText = '{"product_id":1,  "subject":"spaces matter","message":"x"}';
      const resent = JSON.stringify(JSON.parse(signedText));
      const res = await signed('POST', '/api/tickets', { body: resent, signedBody: signedText });
      assert.equal(res.statusCode, 401);
      assert.equal(res.json().reason, 'bad_signature');
      const tampered = await signed('POST', '/api/tickets', {
        body: '{"product_id":2,"subject":"s","message":"m"}',
        signedBody: '{"product_id":1,"subject":"s","message":"m"}',
      });
      assert.equal(tampered.json().reason, 'bad_signature');
      const before = await t.db.selectFrom('tickets').selectAll().where('subject', '=', 'spaces matter').execute();
      assert.equal(before.length, 0, 'nothing was stored');
      const exact = await signed('POST', '/api/tickets', {
        body: signedText.replace('"product_id":1', `"product_id":${productId}`),
      });
      assert.equal(exact.statusCode, 201, 'the same bytes, spaces and all, verify');
    });

    test('an empty body may be signed with the hash of nothing or with an empty fourth line', async () => {
      const ts = String(nowS());
      const emptyLine = svc1Signature(key, svc1Payload(ts, 'GET', '/api/account/me', ''));
      const headers = {
        'x-svc-key': key,
        'x-svc-timestamp': ts,
        'x-svc-signature-version': '1',
        'x-svc-signature': emptyLine,
        'x-svc-nonce': 'empty-line-1',
      };
      assert.equal((await t.app.inject({ method: 'GET', url: '/api/account/me', headers })).statusCode, 200);
    });

    test('a revoked key and the key of a disabled account stop working', async () => {
      const other = await registerUser(t.app);
      const make = async () =>
        (
          await t.app.inject({
            method: 'POST',
            url: '/api/keys',
            headers: { cookie: other.cookie, 'content-type': 'application/json' },
            payload: '{"name":"x"}',
          })
        ).json().data;
      const revoked = await make();
      await t.app.inject({ method: 'DELETE', url: `/api/keys/${revoked.id}`, headers: { cookie: other.cookie } });
      assert.equal((await signed('GET', '/api/account/me', { signKey: revoked.key })).json().reason, 'bad_signature');
      const live = await make();
      assert.equal((await signed('GET', '/api/account/me', { signKey: live.key })).statusCode, 200);
      await t.app.services.accounts.setDisabled(other.email, true);
      const refused = await signed('GET', '/api/account/me', { signKey: live.key });
      assert.equal(refused.statusCode, 401);
      assert.equal(refused.json().reason, 'bad_signature');
    });

    test('failed logins are in the stream of the account they targeted; events are kept 30 days', async () => {
      const target = await registerUser(t.app);
      await t.app.inject({
        method: 'POST',
        url: '/api/auth/login',
        remoteAddress: '198.51.100.40',
        ...json({ email: target.email, password: 'not the password' }),
      });
      const stream = (
        await t.app.inject({ method: 'GET', url: '/api/security/events', headers: { cookie: target.cookie } })
      ).json().data.events;
      assert.equal(stream.length, 1);
      assert.equal(stream[0].kind, 'login_failed');
      assert.equal(stream[0].reason, 'wrong password');
      assert.equal(stream[0].ip, '198.51.100.40');
      assert.ok(!JSON.stringify(stream).includes('not the password'));
      for (const limit of ['0', '201', 'x', '-1']) {
        assert.equal(
          (
            await t.app.inject({
              method: 'GET',
              url: `/api/security/events?limit=${limit}`,
              headers: { cookie: target.cookie },
            })
          ).statusCode,
          400,
        );
      }
      t.clock.advance(31 * 86_400_000);
      await t.app.services.securityEvents.expire();
      const fresh = await registerUser(t.app); // sessions made before the jump have expired
      await t.app.inject({
        method: 'POST',
        url: '/api/auth/login',
        remoteAddress: '198.51.100.41',
        ...json({ email: fresh.email, password: 'nope nope' }),
      });
      const rows = await t.db.selectFrom('security_events').selectAll().where('person_id', '=', target.id).execute();
      assert.equal(rows.length, 0, 'expired');
    });
  });
}
