import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { assertMatchesOpenApi } from '@palisade/console/openapi-check';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import {
  type AgentProcess,
  type ConsoleProcess,
  eventually,
  signUp,
  startAgent,
  startConsoleProcess,
  tempDir,
} from './support/processes.js';

/**
 * What one daemon token can do to the fleet (docs/security.md,
 * "Fleet entries and reported bans"): a server registered with an enrolment token and no agent
 * behind it sends forged check-ins to a real console; two real agents (monitor mode) are the rest
 * of the fleet. On SQLite, and on PostgreSQL when PALISADE_TEST_DATABASE_URL is set.
 */
const pgUrl = process.env.PALISADE_TEST_DATABASE_URL;
if (process.env.CI && !pgUrl) throw new Error('CI: PALISADE_TEST_DATABASE_URL must be set');
const setups: { name: string; env: Record<string, string>; schema: string | null }[] = [
  { name: 'SQLite', env: {}, schema: null },
];
if (pgUrl)
  setups.push({
    name: 'PostgreSQL',
    env: { PALISADE_DATABASE_URL: pgUrl, PALISADE_DATABASE_SCHEMA: `fleet_guards_${process.pid}` },
    schema: `fleet_guards_${process.pid}`,
  });

/** The console's public URL names this address (never called: only compared with reported bans). */
const PUBLIC_IP = '198.51.100.250';
const ORDINARY = '198.51.100.7';
const TEN_YEARS = 10 * 365 * 86_400;

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A non-loopback IPv4 address of this machine (the console's too: it runs here), if it has one. */
const interfaceAddress = () =>
  Object.values(networkInterfaces())
    .flat()
    .find((a) => a && a.family === 'IPv4' && !a.internal)?.address;

for (const setup of setups) {
  describe(`fleet guards against one daemon token: ${setup.name}`, () => {
    const dir = tempDir('palisade-fleet-guards-');
    let console: ConsoleProcess;
    let agents: AgentProcess[] = [];
    let cookie = '';
    let productId = 0;
    const edges: number[] = [];
    const forged: { id: number; token: string }[] = [];

    async function call(method: string, path: string, body?: unknown) {
      const res = await fetch(`${console.url}${path}`, {
        method,
        headers: { cookie, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      const text = await res.text();
      const json = text ? JSON.parse(text) : null;
      if (path.startsWith('/api/fleet')) assertMatchesOpenApi(path.split('?')[0]!, res.status, json, method);
      // biome-ignore lint/suspicious/noExplicitAny: answers are checked field by field
      return { status: res.status, body: json as any };
    }

    /** A server registered `outbound` with an enrolment token: a daemon token with no agent behind it. */
    async function forgeServer(name: string, product: number) {
      const token = (await call('POST', '/api/enrolment-tokens', { product_id: product })).body.data.token;
      const res = await fetch(`${console.url}/api/agent/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({
          name,
          api_key: `agk_${'f'.repeat(40)}`,
          api_url: null,
          port: await closedPort(),
          tls: false,
          tls_fingerprint: null,
          version: '0.1.0',
          connect: 'outbound',
        }),
      });
      const body = await res.json();
      assert.equal(res.status, 201, JSON.stringify(body));
      forged.push({ id: body.data.server_id, token: body.data.daemon_token });
    }

    async function checkin(i: number, bans: unknown[]) {
      const now = Date.now();
      const res = await fetch(`${console.url}/api/agent/checkin`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${forged[i]!.token}` },
        body: JSON.stringify({
          agent_version: '0.1.0',
          hostname: `forged-${i}`,
          facts: { cores: 2 },
          sample: {
            ts: now,
            cpu_pct: 1,
            mem_used_mb: 1,
            mem_total_mb: 2,
            disk_used_pct: 1,
            load1: 0,
            rx_bps: 0,
            tx_bps: 0,
          },
          bans,
        }),
      });
      return { status: res.status, body: await res.json() };
    }
    const ban = (ip: string, extra: Record<string, unknown> = {}) => ({
      ip,
      kind: 'conn_flood',
      attack_id: '1',
      pattern: null,
      at: Date.now(),
      ttl_s: TEN_YEARS,
      ...extra,
    });

    /**
     * Writes straight to the console's database, as an entry stored before these checks existed
     * would be there (`?` placeholders; `$n` on PostgreSQL).
     */
    async function rawSql(text: string, params: unknown[]) {
      if (setup.schema === null) {
        const file = new SQLite(join(dir.path, 'console', 'console.db'));
        try {
          file.prepare(text).run(...params);
        } finally {
          file.close();
        }
        return;
      }
      const client = new pg.Client({ connectionString: pgUrl });
      await client.connect();
      try {
        let i = 0;
        await client.query(`SET search_path TO "${setup.schema}"`);
        await client.query(
          text.replace(/\?/g, () => `$${++i}`),
          params,
        );
      } finally {
        await client.end();
      }
    }

    /** The agent's blacklist (through the control proxy). */
    async function blacklist(edge: number): Promise<{ ip: string; note?: string; source: string }[]> {
      const res = await call('GET', `/api/servers/${edges[edge]}/control?path=blacklist`);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return res.body.entries;
    }
    const holds = async (edge: number, ip: string) => (await blacklist(edge)).find((e) => e.ip === ip);

    before(async () => {
      console = await startConsoleProcess({
        PALISADE_DATA_DIR: join(dir.path, 'console'),
        PALISADE_ALLOW_PRIVATE_TARGETS: '1',
        PALISADE_BOOTSTRAP_ADMIN: '0',
        PALISADE_CHECKIN_INTERVAL_S: '5',
        PALISADE_PUBLIC_URL: `http://${PUBLIC_IP}:8080`,
        ...setup.env,
      });
      cookie = await signUp(console.url, {
        email: `fleet-guards-${process.pid}@example.com`,
        password: 'fleet-password',
        name: 'fleet guard',
      });
      productId = (await call('POST', '/api/products', { catalog_id: 2 })).body.data.product.id; // 25 servers
      agents = await Promise.all([startAgent(), startAgent()]);
      for (const [i, agent] of agents.entries()) {
        const added = await call('POST', '/api/servers', {
          product_id: productId,
          name: `edge-${i + 1}`,
          api_url: agent.url,
          api_key: agent.key,
        });
        assert.equal(added.status, 201, JSON.stringify(added.body));
        edges.push(added.body.data.server.id);
        const tagged = await call('PATCH', `/api/servers/${edges[i]}`, { tags: [i === 0 ? 'db' : 'web'] });
        assert.equal(tagged.status, 200, JSON.stringify(tagged.body));
      }
      await forgeServer('forged-1', productId);
      await forgeServer('forged-2', productId);
      const policy = await call('POST', '/api/fleet/policies', { name: 'everything', trigger: 'any', scope: 'all' });
      assert.equal(policy.status, 201, JSON.stringify(policy.body));
    });

    after(async () => {
      for (const agent of agents) await agent.stop();
      await console?.kill();
      dir.remove();
    });

    test('manual entries: too wide without confirm_wide, special-use, the console’s own address and control characters are a 400 naming the field', async () => {
      const add = (body: Record<string, unknown>) =>
        call('POST', '/api/fleet/entries', { list: 'black', scope: 'all', ...body });
      for (const ip of ['0.0.0.0/1', '127.0.0.1', '::1', '0.0.0.0/8', '8000::/1', '224.0.0.0/4', 'fe80::1']) {
        const res = await add({ ip });
        assert.equal(res.status, 400, `${ip}: ${JSON.stringify(res.body)}`);
        assert.match(res.body.error, /^ip: /, ip);
      }
      assert.match((await add({ ip: '0.0.0.0/1' })).body.error, /wider than \/8.*confirm_wide/);
      assert.match((await add({ ip: '127.0.0.1' })).body.error, /loopback/);
      const wide = await add({ ip: '12.0.0.0/7' });
      assert.deepEqual([wide.status, /^ip: .*confirm_wide/.test(wide.body.error)], [400, true], wide.body.error);
      const own = await add({ ip: '198.51.100.0/24' });
      assert.equal(own.status, 400);
      assert.match(own.body.error, /^ip: 198\.51\.100\.0\/24 covers 198\.51\.100\.250, the console's own address/);
      const nic = interfaceAddress();
      if (nic) {
        const mine = await add({ ip: nic });
        assert.equal(mine.status, 400, `interface address ${nic}: ${JSON.stringify(mine.body)}`);
        assert.match(mine.body.error, /the console's own address \(interface /);
      }
      for (const reason of ['line\nbreak', 'nul\u0000here', 'cr\rhere']) {
        const res = await add({ ip: '192.0.2.44', reason });
        assert.deepEqual([res.status, res.body.error?.split(':')[0]], [400, 'reason'], JSON.stringify(res.body));
      }
      const name = await call('POST', '/api/fleet/policies', { name: 'x\n\u0000', trigger: 'any', scope: 'all' });
      assert.deepEqual([name.status, name.body.error?.split(':')[0]], [400, 'name'], JSON.stringify(name.body));

      // Confirmed, a range wider than /8 is taken; /8 itself needs no confirmation.
      const confirmed = await add({ ip: '12.0.0.0/7', confirm_wide: true, reason: 'confirmed' });
      assert.equal(confirmed.status, 201, JSON.stringify(confirmed.body));
      const eight = await add({ ip: '14.0.0.0/8' });
      assert.equal(eight.status, 201, JSON.stringify(eight.body));
      for (const entry of [confirmed, eight]) {
        const lifted = await call('DELETE', `/api/fleet/entries/${entry.body.data.entry.id}`);
        assert.equal(lifted.status, 200, JSON.stringify(lifted.body));
        assert.equal(lifted.body.data.lifted, 1);
      }
    });

    test('a forged check-in: special-use, too wide, private, the console’s address and control characters are dropped and counted; the ordinary ban still propagates', async () => {
      const res = await checkin(0, [
        ...['0.0.0.0/1', '128.0.0.0/1', '::/1', '8000::/1', '224.0.0.0/4', '10.0.0.0/8'].map((ip) => ban(ip)),
        ...['255.255.255.255', '169.254.169.254', 'fe80::1', '127.0.0.1', '224.0.0.5'].map((ip) => ban(ip)),
        ban('10.1.2.3'),
        ban(PUBLIC_IP),
        ban('203.0.113.201', { kind: 'log_pattern', pattern: 'evil\nfleet:1 forged' }),
        ban('203.0.113.202', { kind: 'x\u0000<script>' }),
        ban(ORDINARY, { ttl_s: null }),
      ]);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const [policy] = (await call('GET', '/api/fleet/policies')).body.data.policies;
      assert.equal(policy.allow_private, false, 'private addresses only when a policy opts in');
      assert.deepEqual(res.body.data.bans, {
        accepted: 1,
        refused: { too_wide: 6, special_use: 5, private: 1, console_address: 1, control_characters: 2 },
      });

      // The ordinary ban reaches both real agents, as an import (docs/decisions.md says so too).
      for (const edge of [0, 1]) {
        const entry = await eventually(`edge-${edge + 1} gets ${ORDINARY}`, () => holds(edge, ORDINARY));
        assert.equal(entry.source, 'import');
        assert.match(entry.note ?? '', /^fleet:\d+ conn_flood attack 1 on forged-1$/);
      }
      const decisions = readFileSync(new URL('../../docs/decisions.md', import.meta.url), 'utf8');
      assert.match(decisions, /Propagated entries arrive on each agent as `import` entries/);

      const entries = (await call('GET', '/api/fleet/entries?list=black')).body.data;
      assert.deepEqual(
        entries.entries.map((e: { address: string }) => e.address),
        [ORDINARY],
        'nothing else became a fleet entry',
      );
      const [entry] = entries.entries;
      assert.ok(entry.expires_at - entry.created_at <= 30 * 86_400_000, 'a null ttl is clamped to 30 days');
      for (const edge of [0, 1]) {
        const fleet = (await blacklist(edge)).filter((e) => /^fleet:/.test(e.note ?? ''));
        assert.deepEqual(
          fleet.map((e) => e.ip),
          [ORDINARY],
          `edge-${edge + 1} holds no refused address`,
        );
      }
      const counts = await call('GET', `/api/fleet/servers/${forged[0]!.id}/bans`);
      assert.equal(counts.status, 200, JSON.stringify(counts.body));
      assert.equal(counts.body.data.refused_total, 15);
      assert.equal(counts.body.data.refused.special_use, 5);
      assert.equal(counts.body.data.limit_per_minute, 60);
    });

    test('an entry scoped to one tag does not stop a reported ban under an all-servers policy from reaching the others', async () => {
      const scoped = await call('POST', '/api/fleet/entries', {
        list: 'black',
        ip: '203.0.113.0/24',
        scope: 'tags',
        tags: ['db'],
      });
      assert.equal(scoped.status, 201, JSON.stringify(scoped.body));
      await eventually('edge-1 (db) gets the /24', () => holds(0, '203.0.113.0/24'));
      const res = await checkin(0, [ban('203.0.113.7')]);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const got = await eventually('edge-2 (web) gets 203.0.113.7', () => holds(1, '203.0.113.7'));
      assert.match(got.note ?? '', /^fleet:/);
      const [reported] = (await call('GET', '/api/fleet/addresses?ip=203.0.113.7')).body.data.entries.filter(
        (e: { address: string }) => e.address === '203.0.113.7',
      );
      assert.deepEqual(
        reported.servers.map((s: { server_id: number }) => s.server_id),
        [edges[1], forged[1]!.id],
        'not edge-1, which the /24 covers already, nor the server that reported it',
      );
    });

    test('a lift answers the servers that still hold the address instead of claiming success', async () => {
      const ip = '198.51.100.9';
      const res = await checkin(0, [ban(ip, { ttl_s: 600 })]);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      for (const edge of [0, 1]) await eventually(`edge-${edge + 1} gets ${ip}`, () => holds(edge, ip));

      // The server that reported it has no agent behind it: its own ban cannot be lifted there.
      const lifted = await call('DELETE', `/api/fleet/addresses?ip=${ip}`);
      assert.equal(lifted.status, 200, JSON.stringify(lifted.body));
      assert.equal(lifted.body.data.lifted, 1);
      assert.equal(lifted.body.data.complete, false, JSON.stringify(lifted.body.data));
      const origin = lifted.body.data.still_held.find((s: { server_id: number }) => s.server_id === forged[0]!.id);
      assert.ok(origin, `the unreachable first server is listed: ${JSON.stringify(lifted.body.data)}`);
      assert.deepEqual([origin.state, origin.address, origin.server_name], ['pending', ip, 'forged-1']);
      assert.ok(origin.reason, 'with why');
      for (const edge of [0, 1])
        await eventually(`edge-${edge + 1} drops ${ip}`, async () =>
          (await holds(edge, ip)) === undefined ? true : undefined,
        );
      // Lifting one entry answers the same.
      const [entry] = (await call('GET', `/api/fleet/addresses?ip=${ORDINARY}`)).body.data.entries;
      const one = await call('DELETE', `/api/fleet/entries/${entry.id}`);
      assert.equal(one.status, 200, JSON.stringify(one.body));
      assert.equal(one.body.data.entry.address, ORDINARY);
      assert.ok(
        one.body.data.still_held.some((s: { server_id: number }) => s.server_id === forged[0]!.id),
        JSON.stringify(one.body.data),
      );
    });

    test('a policy that opts in with allow_private propagates a private address', async () => {
      const [policy] = (await call('GET', '/api/fleet/policies')).body.data.policies;
      const body = { name: policy.name, trigger: policy.trigger, scope: policy.scope };
      const on = await call('PATCH', `/api/fleet/policies/${policy.id}`, { ...body, allow_private: true });
      assert.equal(on.status, 200, JSON.stringify(on.body));
      assert.equal(on.body.data.policy.allow_private, true);
      const res = await checkin(0, [ban('10.1.2.3', { ttl_s: 600 })]);
      assert.deepEqual(res.body.data.bans, { accepted: 1, refused: {} });
      await eventually('edge-2 gets 10.1.2.3', () => holds(1, '10.1.2.3'));
      const off = await call('PATCH', `/api/fleet/policies/${policy.id}`, body);
      assert.equal(off.body.data.policy.allow_private, false, 'off again unless sent');
    });

    test('an entry stored before these checks (0.0.0.0/1) is never put on an agent: the application fails with why', async () => {
      const now = Date.now();
      // The account is the policy's (made in before).
      const [policy] = (await call('GET', '/api/fleet/policies')).body.data.policies;
      await rawSql(
        `insert into fleet_entries (account_id, list, address, reason, origin_kind, scope_kind, created_by, created_at, active_key)
         select account_id, 'black', '0.0.0.0/1', 'stored before the checks', 'manual', 'all', 'an old console', ?, account_id || ':black:0.0.0.0/1'
         from fleet_policies where id = ?`,
        [now, policy.id],
      );
      const bad = (await call('GET', '/api/fleet/addresses?ip=0.0.0.0/1')).body.data.entries.find(
        (e: { address: string }) => e.address === '0.0.0.0/1',
      );
      assert.equal(bad.address, '0.0.0.0/1');
      await rawSql(
        `insert into fleet_applications (entry_id, server_id, account_id, want, force, state, attempts, next_attempt_at, locked_until, preexisting, updated_at)
         select ?, id, account_id, 'present', 0, 'pending', 0, ?, 0, 0, ? from servers where id = ?`,
        [bad.id, now, now, edges[1]],
      );
      const app = await eventually('the application is settled', async () => {
        const e = (await call('GET', '/api/fleet/addresses?ip=0.0.0.0/1')).body.data.entries.find(
          (x: { id: number }) => x.id === bad.id,
        );
        const a = e.servers.find((s: { server_id: number }) => s.server_id === edges[1]);
        return a?.state === 'pending' ? undefined : a;
      });
      assert.equal(app.state, 'failed');
      assert.match(app.reason, /^refused by the console: 0\.0\.0\.0\/1 covers unspecified/);
      assert.equal(await holds(1, '0.0.0.0/1'), undefined, 'edge-2 never got it');
      assert.equal((await call('DELETE', `/api/fleet/entries/${bad.id}`)).status, 200);
    });

    test('reported bans are bounded per server per minute, the rest counted; the entries list pages', async () => {
      const before = (await call('GET', '/api/fleet/entries?limit=1')).body.data.total;
      const started = Date.now();
      let accepted = 0;
      let rate = 0;
      const answers: unknown[] = [];
      for (let round = 0; round < 4; round++) {
        const bans = Array.from({ length: 50 }, (_, i) => ban(`198.51.100.${round * 50 + i + 8}`, { ttl_s: 600 }));
        const res = await checkin(1, bans);
        assert.equal(res.status, 200, JSON.stringify(res.body));
        answers.push(res.body.data.bans);
        accepted += res.body.data.bans.accepted;
        rate += res.body.data.bans.refused.rate ?? 0;
      }
      const sameMinute = Math.floor(started / 60_000) === Math.floor(Date.now() / 60_000);
      if (sameMinute) assert.equal(accepted, 60);
      else assert.ok(accepted <= 120, `${accepted} over two minutes`);
      assert.equal(accepted + rate, 200, `every ban accepted or counted: ${JSON.stringify(answers)}`);
      const counts = (await call('GET', `/api/fleet/servers/${forged[1]!.id}/bans`)).body.data;
      assert.equal(counts.refused.rate, rate);

      const seen = new Set<number>();
      let cursor: string | null = null;
      let pages = 0;
      let total = 0;
      do {
        const page: {
          status: number;
          body: { data: { entries: { id: number }[]; next_cursor: string | null; total: number } };
        } = await call('GET', `/api/fleet/entries?limit=25${cursor ? `&cursor=${cursor}` : ''}`);
        assert.equal(page.status, 200);
        assert.ok(page.body.data.entries.length <= 25);
        for (const e of page.body.data.entries) {
          assert.equal(seen.has(e.id), false, 'no entry twice');
          seen.add(e.id);
        }
        total = page.body.data.total;
        cursor = page.body.data.next_cursor;
        pages++;
      } while (cursor);
      assert.equal(total, before + accepted);
      assert.equal(seen.size, total);
      assert.ok(pages >= 3, `${pages} pages`);
      const bad = await call('GET', '/api/fleet/entries?cursor=nope');
      assert.deepEqual([bad.status, bad.body.error], [400, 'cursor: expected the next_cursor of an earlier page']);
    });
  });
}
