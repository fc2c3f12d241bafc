import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertMatchesOpenApi } from '@palisade/console/openapi-check';
import { startReceiver } from '@palisade/testkit';
import pg from 'pg';
import {
  type AgentProcess,
  type ConsoleProcess,
  eventually,
  signUp,
  startAgent,
  startConsoleProcess,
  tcpRelay,
  tempDir,
} from './support/processes.js';

/**
 * A dead server noticed in a minute (docs/fleet.md, "Server states"): a real
 * console told to give agents a 5 s check-in interval, real agents, a local webhook receiver. A
 * stopped agent is shown `late` within two intervals + 15 s while v1 `online` still says true, and
 * its `late` rule fires; a direct server whose address refuses connections (its agent still checking
 * in) turns `unreachable` with nobody opening its page. On SQLite, and on PostgreSQL when
 * PALISADE_TEST_DATABASE_URL is set.
 */
const pgUrl = process.env.PALISADE_TEST_DATABASE_URL;
if (process.env.CI && !pgUrl) throw new Error('CI: PALISADE_TEST_DATABASE_URL must be set');
const schema = `server_late_${process.pid}`;
const setups: { name: string; env: Record<string, string> }[] = [{ name: 'SQLite', env: {} }];
if (pgUrl) setups.push({ name: 'PostgreSQL', env: { PALISADE_DATABASE_URL: pgUrl, PALISADE_DATABASE_SCHEMA: schema } });

const INTERVAL_S = 5;

interface FleetEntry {
  id: number;
  label: string;
  online: boolean;
  state: string;
  state_reason: string;
  last_seen: number;
  as_of: number;
}

for (const setup of setups) {
  describe(`a dead server is noticed without a viewer: ${setup.name}`, () => {
    const dir = tempDir('palisade-server-late-');
    let consoleProc: ConsoleProcess;
    let receiver: Awaited<ReturnType<typeof startReceiver>>;
    const agents: AgentProcess[] = [];
    let cookie = '';
    let productId = 0;
    let bearer = '';

    async function call(method: string, path: string, body?: unknown) {
      const res = await fetch(`${consoleProc.url}${path}`, {
        method,
        headers: { cookie, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      const text = await res.text();
      const json = text ? JSON.parse(text) : null;
      assertMatchesOpenApi(path.split('?')[0]!, res.status, json, method);
      // biome-ignore lint/suspicious/noExplicitAny: answers are checked field by field
      return { status: res.status, body: json as any, text };
    }

    const fleet = async () => {
      const res = await call('GET', '/api/servers');
      assert.equal(res.status, 200, res.text);
      return res.body.data as { servers: FleetEntry[]; counts: Record<string, number> };
    };
    const entry = async (id: number) => (await fleet()).servers.find((s) => s.id === id)!;

    async function addServer(name: string, agent: AgentProcess, apiUrl = agent.url) {
      const added = await call('POST', '/api/servers', {
        product_id: productId,
        name,
        api_url: apiUrl,
        api_key: agent.key,
      });
      assert.equal(added.status, 201, added.text);
      const id = added.body.data.server.id as number;
      await eventually(`${name} online`, async () => {
        const s = await entry(id);
        return s.state === 'online' && s.last_seen > 0 ? true : undefined;
      });
      return id;
    }

    before(async () => {
      consoleProc = await startConsoleProcess({
        PALISADE_DATA_DIR: dir.path,
        PALISADE_ALLOW_PRIVATE_TARGETS: '1',
        PALISADE_BOOTSTRAP_ADMIN: '0',
        PALISADE_CHECKIN_INTERVAL_S: String(INTERVAL_S),
        PALISADE_ALERT_INTERVAL_S: '1',
        ...setup.env,
      });
      cookie = await signUp(consoleProc.url, {
        email: `late-${process.pid}@example.com`,
        password: 'late-password-123',
        name: 'ops',
      });
      const product = await call('POST', '/api/products', { catalog_id: 1 });
      assert.equal(product.status, 201, product.text);
      productId = product.body.data.product.id;
      const token = await call('POST', '/api/tokens', { name: 'v1' });
      assert.equal(token.status, 201, token.text);
      bearer = token.body.data.token;
      receiver = await startReceiver('ok');
    });

    after(async () => {
      for (const agent of agents) await agent.stop('SIGKILL').catch(() => {});
      await consoleProc?.kill();
      await receiver?.close();
      if (setup.env.PALISADE_DATABASE_URL) {
        const client = new pg.Client({ connectionString: pgUrl });
        await client.connect();
        await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        await client.end();
      }
      dir.remove();
    });

    test('a stopped agent is late within 2 intervals + 15 s, v1 online still true, and its late rule fires', async () => {
      const agent = await startAgent({ 'checkin.interval_s': String(INTERVAL_S) });
      agents.push(agent);
      const id = await addServer('edge-late', agent);
      // Another check-in after the one that made it online, so the agent is on the console's interval.
      const first = (await entry(id)).last_seen;
      await eventually('another check-in', async () => ((await entry(id)).last_seen > first ? true : undefined));

      await agent.stop('SIGKILL');
      const lastSeen = (await entry(id)).last_seen;
      const late = await eventually(
        'the server shown late',
        async () => {
          const s = await entry(id);
          return s.state === 'late' ? s : undefined;
        },
        45_000,
      );
      assert.equal(late.last_seen, lastSeen, 'no check-in since the agent stopped');
      const silence = late.as_of - late.last_seen;
      assert.ok(silence <= 2 * INTERVAL_S * 1000 + 15_000, `shown late ${silence} ms after the last check-in`);
      assert.ok(silence < 120_000);
      assert.equal(late.online, true, 'the dashboard answer keeps v1 online for two minutes');
      assert.match(late.state_reason, /^No check-in for \d+ s; its agent checks in every 5 s/);
      const counts = (await fleet()).counts;
      assert.equal(counts.late, 1);
      // v1 answers keep the spec's rule: online until two minutes after the last check-in.
      const v1 = await fetch(`${consoleProc.url}/api/v1/servers/${id}`, {
        headers: { authorization: `Bearer ${bearer}` },
      });
      assert.equal(v1.status, 200);
      const v1Server = ((await v1.json()) as { data: { online: boolean; last_seen: number } }).data;
      assert.equal(v1Server.online, true);
      assert.equal(v1Server.last_seen, lastSeen);
      const overview = await call('GET', `/api/servers/${id}/section?name=overview`);
      assert.equal(overview.body.data.state, 'late');
      assert.equal(overview.body.data.online, true);

      // A late rule fires for it (made now: its first round finds the server late), once, to the local receiver.
      const hook = await call('PUT', '/api/account/webhook', { url: receiver.url });
      assert.equal(hook.status, 200, hook.text);
      const channel = await call('POST', '/api/alerts/channels', { name: 'signed webhook', kind: 'webhook' });
      assert.equal(channel.status, 201, channel.text);
      const rule = await call('POST', '/api/alerts/rules', {
        name: 'late',
        kind: 'late',
        channel_ids: [channel.body.data.channel.id],
      });
      assert.equal(rule.status, 201, rule.text);
      assert.equal(rule.body.data.rule.kind, 'late');

      const lateAlerts = () =>
        receiver.deliveries
          .map((d) => JSON.parse(d.body) as { kind: string; title: string; rule: string; server: string })
          .filter((a) => a.rule === 'late');
      const fired = await eventually(
        'the late notification',
        () => (lateAlerts().length > 0 ? lateAlerts() : undefined),
        30_000,
      );
      assert.equal(fired[0]!.kind, 'alert.fired');
      assert.equal(fired[0]!.title, 'edge-late is late');
      const history = await eventually('delivered', async () => {
        const rows = (await call('GET', '/api/alerts/history')).body.data.history as {
          title: string;
          status: string;
          created_at: number;
        }[];
        const row = rows.find((h) => h.title === 'edge-late is late');
        return row?.status === 'delivered' ? row : undefined;
      });
      assert.ok(history.created_at - lastSeen < 120_000, 'the alert came before the server would be offline');
      assert.equal(lateAlerts().length, 1, 'one notification, not one per round');
    });

    test('a direct server whose address refuses connections turns unreachable with no one on its page', async () => {
      const agent = await startAgent({ 'checkin.interval_s': String(INTERVAL_S) });
      agents.push(agent);
      // The console reaches the agent through a relay the test can cut; the agent checks in directly.
      const relay = await tcpRelay(Number(new URL(agent.url).port));
      const id = await addServer('edge-refused', agent, relay.url);
      await relay.cut();
      const before = await entry(id);
      assert.equal(before.state, 'online');
      // Only the fleet list is read, which never calls an agent.
      const unreachable = await eventually(
        'the server shown unreachable',
        async () => {
          const s = await entry(id);
          return s.state === 'unreachable' ? s : undefined;
        },
        40_000,
      );
      assert.match(unreachable.state_reason, /calls to the agent have failed for \d+ s: .*(refused|ECONNREFUSED)/i);
      assert.equal(unreachable.online, true);
      // Still checking in: it is not late, the console simply cannot reach it.
      assert.ok(unreachable.last_seen > before.last_seen || unreachable.as_of - unreachable.last_seen < 15_000);
    });
  });
}
