import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { ageText, generateToken, hashToken, lateAfterMs, ONLINE_WINDOW_MS } from '@palisade/protocol';
import { lastKnownScore } from '../src/services/score.js';
import { serverState } from '../src/services/servers/state.js';
import {
  createToken,
  dialects,
  insertTestServer,
  registerUser,
  standInAgent,
  type TestApp,
  type TestUser,
  testApp,
} from './support.js';

// The three states of a server and where they show (docs/fleet.md, "Server states").

const NOW = Date.UTC(2026, 10, 22, 12, 0, 0);
/** The default 30 s check-in interval: late after 65 s. */
const LATE = lateAfterMs(30);
const row = (fields: Partial<Parameters<typeof serverState>[0]> = {}) => ({
  last_seen: NOW - 30_000,
  last_call_ok_at: null,
  last_call_error_at: null,
  last_call_error: null,
  ...fields,
});

describe('serverState: one function decides online, late, unreachable and offline', () => {
  test('online: a check-in within two minutes and no failed call since the last answered one', () => {
    assert.deepEqual(serverState(row(), NOW, LATE), {
      state: 'online',
      online: true,
      reason: 'Last check-in 30 s ago',
    });
    assert.equal(serverState(row({ last_call_ok_at: NOW - 1000 }), NOW, LATE).state, 'online');
    assert.equal(serverState(row({ last_seen: NOW - LATE + 1 }), NOW, LATE).state, 'online');
  });

  test('late: no check-in for two intervals (and 5 s), not yet two minutes; v1 online stays true', () => {
    assert.equal(LATE, 65_000);
    assert.deepEqual(serverState(row({ last_seen: NOW - LATE }), NOW, LATE), {
      state: 'late',
      online: true,
      reason: 'No check-in for 65 s; its agent checks in every 30 s',
    });
    assert.equal(serverState(row({ last_seen: NOW - ONLINE_WINDOW_MS + 1 }), NOW, LATE).state, 'late');
    const failing = serverState(
      row({ last_seen: NOW - 70_000, last_call_error_at: NOW - 20_000, last_call_error: 'agent unreachable' }),
      NOW,
      LATE,
    );
    assert.equal(failing.state, 'late', 'a silent server is late first, whatever the calls do');
    assert.match(failing.reason, /, and the console's calls to the agent have failed for 20 s: agent unreachable$/);
  });

  test('unreachable: checked in, but the console’s calls to the agent fail; v1 online stays true', () => {
    const s = serverState(
      row({ last_call_ok_at: NOW - 60_000, last_call_error_at: NOW - 5000, last_call_error: 'agent unreachable' }),
      NOW,
      LATE,
    );
    assert.equal(s.state, 'unreachable');
    assert.equal(s.online, true, 'v1 online keeps the two-minute rule');
    assert.equal(
      s.reason,
      "Last check-in 30 s ago, but the console's calls to the agent have failed for 5 s: agent unreachable",
    );
  });

  test('offline: no check-in for two minutes, whatever the calls did; never checked in is offline too', () => {
    const late = serverState(row({ last_seen: NOW - ONLINE_WINDOW_MS, last_call_error_at: NOW - 1000 }), NOW, LATE);
    assert.deepEqual(late, { state: 'offline', online: false, reason: 'No check-in for 2 min' });
    assert.deepEqual(serverState(row({ last_seen: null }), NOW, LATE), {
      state: 'offline',
      online: false,
      reason: 'The agent has never checked in',
    });
  });

  test('the last known score is the score at the last check-in, with its time', () => {
    assert.deepEqual(lastKnownScore(NOW - 180_000, 820), { score: 970, at: NOW - 180_000 });
    assert.equal(lastKnownScore(null, null), null);
    assert.equal(ageText(179_000), '3 min');
  });
});

for (const dialect of dialects()) {
  describe(`server states in the answers (${dialect})`, () => {
    let t: TestApp;
    let user: TestUser;
    before(async () => {
      t = await testApp(dialect, { PALISADE_ALLOW_PRIVATE_TARGETS: '1' });
      user = await registerUser(t.app);
    });
    after(() => t.close());

    const get = (url: string) => t.app.inject({ method: 'GET', url, headers: { cookie: user.cookie } });

    async function serverAt(port: number) {
      const server = await insertTestServer(t.app, user, { name: `s-${port}` });
      const daemon = generateToken('daemon');
      await t.db
        .updateTable('servers')
        .set({
          daemon_token_hash: hashToken(daemon),
          api_url: `http://127.0.0.1:${port}`,
          api_key_enc: t.app.secrets.seal(generateToken('agentKey')),
        })
        .where('id', '=', server.id)
        .execute();
      return { id: server.id, daemon };
    }

    const checkin = (daemon: string, extra: Record<string, unknown> = {}) =>
      t.app.inject({
        method: 'POST',
        url: '/api/agent/checkin',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${daemon}` },
        payload: {
          agent_version: '0.1.0',
          hostname: 'web-1',
          facts: { cores: 2 },
          sample: {
            ts: t.clock.now,
            cpu_pct: 10,
            mem_used_mb: 1000,
            mem_total_mb: 8000,
            disk_used_pct: 40,
            load1: 0.2,
            rx_bps: 0,
            tx_bps: 0,
            ...extra,
          },
        },
      });

    test('a failed call makes the server unreachable at once; an answered one makes it online again', async () => {
      const agent = standInAgent();
      await new Promise<void>((resolve) => agent.listen(0, '127.0.0.1', resolve));
      const port = (agent.address() as AddressInfo).port;
      const { id, daemon } = await serverAt(port);
      assert.equal((await checkin(daemon)).statusCode, 200);
      const control = () => get(`/api/servers/${id}/control?path=whitelist`);
      assert.equal((await control()).statusCode, 200);
      let overview = (await get(`/api/servers/${id}/section?name=overview`)).json().data;
      assert.equal(overview.state, 'online');

      await new Promise((resolve) => agent.close(resolve));
      t.clock.advance(5000);
      const failed = await control();
      assert.equal(failed.statusCode, 502);
      overview = (await get(`/api/servers/${id}/section?name=overview`)).json().data;
      assert.equal(overview.state, 'unreachable');
      assert.equal(overview.online, true);
      assert.match(overview.state_reason, /calls to the agent have failed for 0 s: agent unreachable$/);
      const listed = (await get('/api/servers')).json().data;
      assert.equal(listed.servers.find((s: { id: number }) => s.id === id).state, 'unreachable');
      const v1 = (
        await t.app.inject({ method: 'GET', url: `/api/v1/servers/${id}`, headers: await tokenHeader() })
      ).json().data;
      assert.equal(v1.online, true, 'v1 online keeps the spec’s rule');
      assert.equal((await get(`/api/servers/${id}/section?name=score`)).json().data.state, 'unreachable');

      // A later failure keeps the time the failures began; the agent answering again clears it.
      t.clock.advance(10_000);
      await control();
      overview = (await get(`/api/servers/${id}/section?name=overview`)).json().data;
      assert.match(overview.state_reason, /have failed for 10 s/);
      const again = standInAgent();
      await new Promise<void>((resolve) => again.listen(port, '127.0.0.1', resolve));
      try {
        assert.equal((await control()).statusCode, 200);
        overview = (await get(`/api/servers/${id}/section?name=overview`)).json().data;
        assert.equal(overview.state, 'online');
      } finally {
        await new Promise((resolve) => again.close(resolve));
      }
    });

    test('a refused key makes the server unreachable; an agent that fails one operation is still online', async () => {
      let status = 500;
      const agent = standInAgent(() => status);
      await new Promise<void>((resolve) => agent.listen(0, '127.0.0.1', resolve));
      try {
        const { id, daemon } = await serverAt((agent.address() as AddressInfo).port);
        await checkin(daemon);
        const control = () => get(`/api/servers/${id}/control?path=whitelist`);
        const state = async () => (await get(`/api/servers/${id}/section?name=overview`)).json().data;
        assert.equal((await control()).statusCode, 502);
        assert.equal((await state()).state, 'online', 'a 5xx is an answer');
        status = 401;
        assert.equal((await control()).statusCode, 502);
        const refused = await state();
        assert.equal(refused.state, 'unreachable');
        assert.match(refused.state_reason, /: the agent rejected the key/);
      } finally {
        await new Promise((resolve) => agent.close(resolve));
      }
    });

    test('the periodic recheck probes every direct server checking in, with no one on its page', async () => {
      const agent = standInAgent();
      await new Promise<void>((resolve) => agent.listen(0, '127.0.0.1', resolve));
      const port = (agent.address() as AddressInfo).port;
      const { id, daemon } = await serverAt(port);
      await checkin(daemon);
      const state = async () => (await get(`/api/servers/${id}/section?name=overview`)).json().data.state;
      assert.equal(await state(), 'online');
      await new Promise((resolve) => agent.close(resolve));
      // Nobody calls the agent; the recheck's /health probe finds the refused connection.
      const round = await t.app.services.servers.recheckUnreachable();
      assert.ok(round.checked >= 1, JSON.stringify(round));
      assert.equal(await state(), 'unreachable');
      // An agent's /health answer (standInAgent() answers the whitelist read only).
      const again = createServer((req, res) => {
        req.resume();
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok","version":"0.1.0"}');
      });
      await new Promise<void>((resolve) => again.listen(port, '127.0.0.1', resolve));
      try {
        const next = await t.app.services.servers.recheckUnreachable();
        assert.ok(next.answered >= 1, JSON.stringify(next));
        assert.equal(await state(), 'online');
      } finally {
        await new Promise((resolve) => again.close(resolve));
      }
      // Offline servers are not asked: after two minutes without a check-in there is nothing to recheck.
      t.clock.advance(ONLINE_WINDOW_MS);
      assert.deepEqual(await t.app.services.servers.recheckUnreachable(), { checked: 0, answered: 0 });
    });

    test('the recheck reads an outbound server by its link: up nowhere is unreachable, and late outranks it', async () => {
      const { id, daemon } = await serverAt(9);
      await t.db.updateTable('servers').set({ connect: 'outbound' }).where('id', '=', id).execute();
      await checkin(daemon);
      const overview = async () => (await get(`/api/servers/${id}/section?name=overview`)).json().data;
      assert.equal((await overview()).state, 'online');
      await t.app.services.servers.recheckUnreachable();
      const down = await overview();
      assert.equal(down.state, 'unreachable');
      assert.match(down.state_reason, /: the outbound link is down$/);
      // Two missed check-ins of the console's interval (30 s here): late, the failing calls still named.
      t.clock.advance(65_000);
      const late = await overview();
      assert.equal(late.state, 'late');
      assert.equal(late.online, true);
      assert.match(late.state_reason, /^No check-in for 65 s; its agent checks in every 30 s, and the console's calls/);
      t.clock.advance(ONLINE_WINDOW_MS);
    });

    test('offline after two minutes: the last known score with its time, the same clock and words as the notes', async () => {
      const { id, daemon } = await serverAt(9);
      await checkin(daemon, { cpu_pct: 85 });
      const seenAt = t.clock.now;
      const before = (await get(`/api/servers/${id}/section?name=score`)).json().data;
      t.clock.advance(ONLINE_WINDOW_MS + 60_000);
      const server = (await get(`/api/servers/${id}`)).json().data.server;
      assert.equal(server.state, 'offline');
      assert.equal(server.online, false);
      assert.equal(server.state_reason, 'No check-in for 3 min');
      assert.deepEqual(server.last_known_score, { score: before.score, at: seenAt });
      assert.ok(server.score < before.score, 'the v1 score decays as before');
      assert.equal(server.as_of, t.clock.now);
      assert.ok(server.score_notes.includes('Last check-in 3 min ago'), server.score_notes.join('; '));
      const score = (await get(`/api/servers/${id}/section?name=score`)).json().data;
      assert.equal(score.state, 'offline');
      assert.deepEqual(score.last_known_score, server.last_known_score);
      assert.equal(score.as_of, server.as_of);
    });

    test('the fleet list counts servers by state and under attack from the latest check-in', async () => {
      const other = await registerUser(t.app);
      const mine = async (name: string) => {
        const s = await insertTestServer(t.app, other, { name });
        const daemon = generateToken('daemon');
        await t.db
          .updateTable('servers')
          .set({ daemon_token_hash: hashToken(daemon) })
          .where('id', '=', s.id)
          .execute();
        return daemon;
      };
      const attacked = await mine('attacked');
      const calm = await mine('calm');
      await mine('never');
      await checkin(attacked, { attacks_active: 2 });
      await checkin(calm, { attacks_active: 0 });
      const res = await t.app.inject({ method: 'GET', url: '/api/servers', headers: { cookie: other.cookie } });
      const { servers, counts } = res.json().data;
      assert.deepEqual(counts, { online: 2, late: 0, unreachable: 0, offline: 1, under_attack: 1 });
      assert.deepEqual(
        servers.map((s: { label: string; attacks_active: number | null }) => [s.label, s.attacks_active]),
        [
          ['attacked', 2],
          ['calm', 0],
          ['never', null],
        ],
      );
      t.clock.advance(ONLINE_WINDOW_MS);
      const later = (
        await t.app.inject({ method: 'GET', url: '/api/servers', headers: { cookie: other.cookie } })
      ).json().data;
      assert.deepEqual(later.counts, { online: 0, late: 0, unreachable: 0, offline: 3, under_attack: 0 });
    });

    async function tokenHeader() {
      return { authorization: `Bearer ${await createToken(t.app, user)}` };
    }
  });
}
