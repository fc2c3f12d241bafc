import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { signRequest } from '@palisade/protocol';
import pg from 'pg';
import {
  type ConsoleProcess,
  eventually,
  runConsoleCli,
  startAgent,
  startConsoleProcess,
  tempDir,
} from './support/processes.js';

/**
 * Several console processes behind one database (and Redis) behave as one console. The same suite
 * runs against a single SQLite console, where the answers must be the same.
 */
interface Setup {
  name: string;
  count: number;
  env: () => Record<string, string>;
}

const pgUrl = process.env.PALISADE_TEST_DATABASE_URL;
const redisUrl = process.env.PALISADE_TEST_REDIS_URL;
if (process.env.CI && (!pgUrl || !redisUrl)) {
  throw new Error(
    'CI: PALISADE_TEST_DATABASE_URL and PALISADE_TEST_REDIS_URL must be set; the multi-console suite would be skipped',
  );
}

const schema = `multi_${process.pid}`;
const setups: Setup[] = [{ name: 'one SQLite console', count: 1, env: () => ({}) }];
if (pgUrl) {
  setups.push({
    name: 'three consoles on PostgreSQL',
    count: 3,
    env: () => ({ PALISADE_DATABASE_URL: pgUrl, PALISADE_DATABASE_SCHEMA: `${schema}_pg` }),
  });
  if (redisUrl) {
    setups.push({
      name: 'three consoles on PostgreSQL and Redis',
      count: 3,
      env: () => ({
        PALISADE_DATABASE_URL: pgUrl,
        PALISADE_DATABASE_SCHEMA: `${schema}_redis`,
        PALISADE_REDIS_URL: redisUrl,
        PALISADE_REDIS_PREFIX: `palisade-test-${process.pid}-${Date.now()}`,
      }),
    });
  }
}

async function api(
  base: string,
  method: string,
  path: string,
  options: { body?: unknown; cookie?: string; token?: string; clientIp?: string } = {},
) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: {
      // The consoles trust 127.0.0.1 as their proxy, so tests can speak for distinct clients.
      ...(options.clientIp ? { 'x-forwarded-for': options.clientIp } : {}),
      ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...(options.cookie ? { cookie: options.cookie } : {}),
      ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
    },
    ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
  });
  const text = await res.text();
  return {
    status: res.status,
    headers: res.headers,
    json: text ? (JSON.parse(text) as { data?: Record<string, unknown>; error?: string }) : {},
  };
}

for (const setup of setups) {
  describe(setup.name, () => {
    const dir = tempDir('palisade-multi-');
    const consoles: ConsoleProcess[] = [];
    let cookie = '';
    let env: Record<string, string> = {};
    const nth = (i: number) => consoles[i % consoles.length]!.url;

    before(async () => {
      env = {
        PALISADE_DATA_DIR: dir.path,
        PALISADE_BOOTSTRAP_ADMIN: '0',
        PALISADE_TRUST_PROXY: '127.0.0.1',
        PALISADE_ALLOW_PRIVATE_TARGETS: '1',
        PALISADE_ALERT_INTERVAL_S: '1',
        PALISADE_CHECKIN_INTERVAL_S: '5',
        ...setup.env(),
      };
      // Start them together: migrations must run once, safely, when several processes start at the same time.
      consoles.push(...(await Promise.all(Array.from({ length: setup.count }, () => startConsoleProcess(env)))));
      const email = `multi-${process.pid}-${setup.count}-${Math.random().toString(36).slice(2, 6)}@example.com`;
      const res = await fetch(`${nth(0)}/api/auth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email, password: 'several-consoles', name: 'Multi' }),
      });
      assert.equal(res.status, 201);
      cookie = res.headers.get('set-cookie')!.split(';')[0]!;
    });

    after(async () => {
      await Promise.all(consoles.map((c) => c.kill()));
      dir.remove();
      const schemaName = setup.env().PALISADE_DATABASE_SCHEMA;
      if (pgUrl && schemaName) {
        const client = new pg.Client({ connectionString: pgUrl });
        await client.connect();
        await client.query(`DROP SCHEMA IF EXISTS "${schemaName}" CASCADE`);
        await client.end();
      }
    });

    test('a session made on one console works on every console, and logout on one ends it everywhere', async () => {
      for (let i = 0; i < consoles.length; i += 1) {
        assert.equal((await api(nth(i), 'GET', '/api/account/me', { cookie })).status, 200);
      }
      const login = await fetch(`${nth(1)}/api/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          email: (await api(nth(0), 'GET', '/api/account/me', { cookie })).json.data!.email,
          password: 'several-consoles',
        }),
      });
      const second = login.headers.get('set-cookie')!.split(';')[0]!;
      assert.equal((await api(nth(2), 'POST', '/api/auth/logout', { cookie: second })).status, 200);
      for (let i = 0; i < consoles.length; i += 1) {
        assert.equal((await api(nth(i), 'GET', '/api/account/me', { cookie: second })).status, 401);
      }
    });

    test('exactly 120 v1 requests a minute succeed for one token, spread across the consoles', async () => {
      const token = (await api(nth(0), 'POST', '/api/tokens', { cookie, body: { name: 'spread' } })).json.data!
        .token as string;
      const answers = await Promise.all(
        Array.from({ length: 150 }, (_, i) => api(nth(i), 'GET', '/api/v1/me', { token })),
      );
      const ok = answers.filter((a) => a.status === 200).length;
      const limited = answers.filter((a) => a.status === 429);
      assert.equal(ok, 120);
      assert.equal(limited.length, 30);
      for (const a of limited) assert.ok(Number(a.headers.get('retry-after')) >= 1);
    });

    test('a revoked token fails on every console at once', async () => {
      const created = (await api(nth(0), 'POST', '/api/tokens', { cookie, body: { name: 'short-lived' } })).json.data!;
      for (let i = 0; i < consoles.length; i += 1) {
        assert.equal((await api(nth(i), 'GET', '/api/v1/servers', { token: created.token as string })).status, 200);
      }
      assert.equal((await api(nth(1), 'DELETE', `/api/tokens/${created.id}`, { cookie })).status, 200);
      for (let i = 0; i < consoles.length; i += 1) {
        assert.equal((await api(nth(i), 'GET', '/api/v1/servers', { token: created.token as string })).status, 401);
      }
    });

    test('an account disabled by the admin CLI loses its tokens, cached by every console, at once', async () => {
      const email = `disabled-${process.pid}-${setup.count}@example.com`;
      const signUp = await fetch(`${nth(0)}/api/auth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': '198.51.100.77' },
        body: JSON.stringify({ email, password: 'several-consoles', name: 'Soon disabled' }),
      });
      assert.equal(signUp.status, 201);
      const own = signUp.headers.get('set-cookie')!.split(';')[0]!;
      const token = (await api(nth(0), 'POST', '/api/tokens', { cookie: own, body: { name: 'cached' } })).json.data!
        .token as string;
      // Twice each: the second answer comes from the console's memory (docs/performance.md).
      for (let i = 0; i < 2 * consoles.length; i += 1) {
        assert.equal((await api(nth(i), 'GET', '/api/v1/servers', { token })).status, 200);
      }
      const disabled = await runConsoleCli(env, ['admin', 'disable', email]);
      assert.equal(disabled.code, 0, disabled.out);
      for (let i = 0; i < consoles.length; i += 1) {
        assert.equal((await api(nth(i), 'GET', '/api/v1/servers', { token })).status, 401);
      }
    });

    test('a signed request accepted by one console is a replay on every other', async () => {
      const key = (await api(nth(0), 'POST', '/api/keys', { cookie, body: { name: 'replay' } })).json.data!
        .key as string;
      const headers = signRequest({ key, method: 'GET', path: '/api/account/me', body: '' });
      const send = (i: number) => fetch(`${nth(i)}/api/account/me`, { headers });
      const first = await send(0);
      assert.equal(first.status, 200);
      for (let i = 1; i < Math.max(2, consoles.length); i += 1) {
        const again = await send(i);
        assert.equal(again.status, 401);
        assert.equal(((await again.json()) as { reason: string }).reason, 'replay');
      }
    });

    test('each queued notification is delivered exactly once, whichever console sends it', async () => {
      const seen: string[] = [];
      const receiver = http.createServer((req, res) => {
        req.resume();
        req.on('end', () => {
          seen.push(String(req.headers['x-palisade-delivery']));
          res.writeHead(204).end();
        });
      });
      await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
      try {
        const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
        assert.equal((await api(nth(0), 'PUT', '/api/account/webhook', { cookie, body: { url } })).status, 200);
        const taken = await api(nth(1), 'POST', '/api/products', { cookie, body: { catalog_id: 2 } });
        assert.equal(taken.status, 201, JSON.stringify(taken.json));
        const product = taken.json.data!.product as { id: number };
        for (let i = 0; i < 6; i += 1) {
          const res = await api(nth(i), 'POST', '/api/tickets', {
            cookie,
            body: { product_id: product.id, subject: `spread ${i}`, message: 'm' },
          });
          assert.equal(res.status, 201);
        }
        // Every send is recorded as an attempt once it ended, whichever console made it: once six
        // attempts are recorded as delivered, each row is settled and no console claims it again.
        const attempts = await eventually('six delivered attempts', async () => {
          const hook = (await api(nth(0), 'GET', '/api/account/webhook?limit=100', { cookie })).json.data!;
          const items = hook.deliveries as { notification_id: number; status: string }[];
          return items.length >= 6 && items.every((a) => a.status === 'delivered') ? items : undefined;
        });
        assert.equal(new Set(attempts.map((a) => a.notification_id)).size, 6, 'an attempt for each of the six');
        assert.equal(attempts.length, 6, 'one attempt each');
        assert.equal(new Set(seen).size, 6, 'all six arrived');
        assert.equal(seen.length, 6, 'none twice');
      } finally {
        await new Promise((resolve) => receiver.close(resolve));
      }
    });

    test("an alert from a real agent's check-ins fires once and resolves once, whichever console evaluates", async () => {
      const texts: string[] = [];
      const receiver = http.createServer((req, res) => {
        let body = '';
        req.on('data', (c: Buffer) => {
          body += c.toString('utf8');
        });
        req.on('end', () => {
          texts.push((JSON.parse(body) as { text: string }).text.split('\n')[0]!);
          res.writeHead(200).end('ok');
        });
      });
      await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
      const agent = await startAgent({ 'checkin.interval_s': '5', 'metrics.interval_s': '1' });
      try {
        const taken = await api(nth(0), 'POST', '/api/products', { cookie, body: { catalog_id: 2 } });
        assert.equal(taken.status, 201, JSON.stringify(taken.json));
        const product = taken.json.data!.product as { id: number };
        const added = await api(nth(1), 'POST', '/api/servers', {
          cookie,
          body: { product_id: product.id, name: 'alerted-1', api_url: agent.url, api_key: agent.key },
        });
        assert.equal(added.status, 201, JSON.stringify(added.json));
        const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/slack`;
        const channel = await api(nth(2), 'POST', '/api/alerts/channels', {
          cookie,
          body: { name: 'chat', kind: 'slack', url },
        });
        assert.equal(channel.status, 201, JSON.stringify(channel.json));
        const channelId = (channel.json.data!.channel as { id: number }).id;
        // Any used disk is above 0 %: the rule fires at the first round after the agent's first check-in.
        const rule = { name: 'disk used', kind: 'metric', metric: 'disk', threshold: 0, channel_ids: [channelId] };
        const created = await api(nth(0), 'POST', '/api/alerts/rules', { cookie, body: rule });
        assert.equal(created.status, 201, JSON.stringify(created.json));
        const ruleId = (created.json.data!.rule as { id: number }).id;
        await eventually('the alert', async () => (texts.length > 0 ? true : undefined), 60_000);
        // No disk is above 100 %: the next round resolves it. Every console evaluates (one at a time)
        // meanwhile, so a second "fired" from another console would arrive before the "resolved".
        const changed = await api(nth(1), 'PUT', `/api/alerts/rules/${ruleId}`, {
          cookie,
          body: { ...rule, threshold: 100 },
        });
        assert.equal(changed.status, 200, JSON.stringify(changed.json));
        await eventually(
          'the resolution',
          async () => (texts.some((t) => /back to/.test(t)) ? true : undefined),
          60_000,
        );
        assert.equal(texts.length, 2, texts.join(' | '));
        assert.match(texts[0]!, /^alerted-1: disk at [0-9.]+%$/);
        assert.match(texts[1]!, /^alerted-1: disk back to [0-9.]+%$/);
        // The receiver may answer before the console records the delivery.
        const history = await eventually('both recorded as delivered', async () => {
          const rows = (await api(nth(2), 'GET', '/api/alerts/history', { cookie })).json.data!.history as {
            kind: string;
            status: string;
          }[];
          return rows.every((h) => h.status === 'delivered') ? rows : undefined;
        });
        assert.deepEqual(
          history.map((h) => h.kind),
          ['alert.resolved', 'alert.fired'],
        );
      } finally {
        await agent.stop();
        await new Promise((resolve) => receiver.close(resolve));
      }
    });

    test('a signed write re-sent with a new nonce is a replay on every console; identical reads are not', async () => {
      const key = (await api(nth(0), 'POST', '/api/keys', { cookie, body: { name: 'write-replay' } })).json.data!
        .key as string;
      const taken = await api(nth(0), 'POST', '/api/products', { cookie, body: { catalog_id: 2 } });
      assert.equal(taken.status, 201, JSON.stringify(taken.json));
      const product = taken.json.data!.product as { id: number };
      const opened = await api(nth(0), 'POST', '/api/tickets', {
        cookie,
        body: { product_id: product.id, subject: 'replayed write', message: 'first' },
      });
      const ticketId = (opened.json.data!.ticket as { id: number }).id;
      const path = `/api/tickets/${ticketId}/messages`;
      const body = '{"message":"sent once"}';
      const captured = signRequest({ key, method: 'POST', path, body });
      const send = (i: number, nonce: string) =>
        fetch(`${nth(i)}${path}`, {
          method: 'POST',
          headers: { ...captured, 'x-svc-nonce': nonce, 'content-type': 'application/json' },
          body,
        });
      assert.equal((await send(0, 'x-1')).status, 201);
      for (let i = 0; i < Math.max(2, consoles.length); i += 1) {
        const again = await send(i, `x-${i + 2}`);
        assert.equal(again.status, 401);
        assert.equal(((await again.json()) as { reason: string }).reason, 'replay');
      }
      const thread = await api(nth(consoles.length - 1), 'GET', `/api/tickets/${ticketId}`, { cookie });
      const messages = (thread.json.data!.ticket as { messages: { body: string }[] }).messages;
      assert.equal(messages.filter((m) => m.body === 'sent once').length, 1);
      // Two identical signed reads in the same second, each with its own nonce, both stay legitimate.
      const read = signRequest({ key, method: 'GET', path: '/api/account/me', body: '' });
      for (let i = 0; i < 2; i += 1) {
        const res = await fetch(`${nth(i % consoles.length)}/api/account/me`, {
          headers: { ...read, 'x-svc-nonce': `read-${i}` },
        });
        assert.equal(res.status, 200);
      }
    });

    test('the login window is per IP across every console: the 9th attempt in a minute is refused', async () => {
      const attempts = [];
      for (let i = 0; i < 9; i += 1) {
        const body = { email: 'nobody@example.com', password: 'wrong-password' };
        attempts.push(await api(nth(i), 'POST', '/api/auth/login', { body, clientIp: '198.51.100.77' }));
      }
      assert.deepEqual(
        attempts.map((a) => a.status),
        [401, 401, 401, 401, 401, 401, 401, 401, 429],
      );
      assert.equal(attempts[8]!.json.error, 'too many attempts, try again later');
      const other = await api(nth(0), 'POST', '/api/auth/login', {
        body: { email: 'nobody@example.com', password: 'x' },
        clientIp: '198.51.100.78',
      });
      assert.equal(other.status, 401, 'another client is not limited');
    });
  });
}
