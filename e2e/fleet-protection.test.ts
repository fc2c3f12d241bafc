import assert from 'node:assert/strict';
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { assertMatchesOpenApi } from '@palisade/console/openapi-check';
import {
  type AgentProcess,
  agentKey,
  type ConsoleProcess,
  eventually,
  runAgentDaemon,
  signUp,
  startAgent,
  startConsoleProcess,
  tempDir,
} from './support/processes.js';

/**
 * Fleet policies end to end (docs/protection.md, "Fleet policies"): three real agents (monitor
 * mode) and a console. A block pattern line on the first agent bans an address there; the console
 * hears of it in the agent's check-in and bans it on the other two through the control proxy; the
 * third, stopped meanwhile, gets it once it is back; one action lifts it everywhere; every step is
 * in the audit log. The same with two console processes on PostgreSQL, where each ban is
 * propagated once.
 */
interface Setup {
  name: string;
  consoles: number;
  env: () => Record<string, string>;
}

const pgUrl = process.env.PALISADE_TEST_DATABASE_URL;
if (process.env.CI && !pgUrl) throw new Error('CI: PALISADE_TEST_DATABASE_URL must be set');
const setups: Setup[] = [{ name: 'one console on SQLite', consoles: 1, env: () => ({}) }];
if (pgUrl) {
  setups.push({
    name: 'two consoles on PostgreSQL',
    consoles: 2,
    env: () => ({ PALISADE_DATABASE_URL: pgUrl, PALISADE_DATABASE_SCHEMA: `fleet_prot_${process.pid}` }),
  });
}

const ATTACKER = '198.51.100.77';

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** An agent with a fixed port and its own directory, so it can be stopped and started again as the same server. */
async function restartableAgent(dir: string) {
  const stateDir = join(dir, 'state');
  const configFile = join(dir, 'agent.conf');
  mkdirSync(dir, { recursive: true });
  const port = await freePort();
  writeFileSync(
    configFile,
    [`metrics.listen = 127.0.0.1:${port}`, 'checkin.interval_s = 5', 'protection.backend = monitor', ''].join('\n'),
  );
  const key = agentKey(stateDir, configFile);
  let daemon = await runAgentDaemon(configFile, stateDir);
  return {
    key,
    url: daemon.url,
    stop: () => daemon.stop(),
    async start() {
      daemon = await runAgentDaemon(configFile, stateDir);
    },
  };
}

for (const setup of setups) {
  describe(`fleet policies with real agents: ${setup.name}`, () => {
    const dir = tempDir('palisade-fleet-prot-');
    const consoles: ConsoleProcess[] = [];
    let agents: AgentProcess[] = [];
    let third: Awaited<ReturnType<typeof restartableAgent>> | null = null;
    let cookie = '';
    const serverIds: number[] = [];
    const logFile = join(dir.path, 'app.log');
    const url = (i = 0) => consoles[i % consoles.length]!.url;

    async function call(method: string, path: string, body?: unknown, via = 0) {
      const res = await fetch(`${url(via)}${path}`, {
        method,
        headers: { cookie, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      const text = await res.text();
      const json = text ? JSON.parse(text) : null;
      if (path.startsWith('/api/fleet') || path.startsWith('/api/audit'))
        assertMatchesOpenApi(path.split('?')[0]!, res.status, json, method);
      // biome-ignore lint/suspicious/noExplicitAny: answers are checked field by field
      return { status: res.status, body: json as any };
    }

    /** The agent's blacklist entry for the attacker, read through the console's control proxy. */
    async function held(server: number): Promise<{ note?: string; source: string } | undefined> {
      const res = await call('GET', `/api/servers/${serverIds[server]}/control?path=blacklist`);
      if (res.status !== 200) return undefined;
      return res.body.entries.find((e: { ip: string }) => e.ip === ATTACKER);
    }

    /** Waits until the server's check-in time (last_seen) has changed `count` times. */
    async function checkIns(server: number, count: number) {
      const lastSeen = async () =>
        (await call('GET', `/api/servers/${serverIds[server]}`)).body.data.server.last_seen as number;
      let seen = await lastSeen();
      for (let i = 0; i < count; i++) {
        const previous = seen;
        seen = await eventually(`edge-${server + 1} checks in`, async () => {
          const now = await lastSeen();
          return now !== previous ? now : undefined;
        });
      }
    }

    before(async () => {
      writeFileSync(logFile, '');
      for (let i = 0; i < setup.consoles; i++) {
        consoles.push(
          await startConsoleProcess({
            // One data directory: the consoles share the secret key that seals the agents' keys.
            PALISADE_DATA_DIR: join(dir.path, 'console'),
            PALISADE_ALLOW_PRIVATE_TARGETS: '1',
            PALISADE_BOOTSTRAP_ADMIN: '0',
            PALISADE_CHECKIN_INTERVAL_S: '5',
            ...setup.env(),
          }),
        );
      }
      cookie = await signUp(url(), {
        email: `fleet-prot-${process.pid}@example.com`,
        password: 'fleet-password',
        name: 'fleet ops',
      });
      const product = (await call('POST', '/api/products', { catalog_id: 1 })).body.data.product;
      agents = await Promise.all([startAgent(), startAgent()]);
      third = await restartableAgent(join(dir.path, 'third'));
      const targets = [...agents.map((a) => ({ url: a.url, key: a.key })), { url: third.url, key: third.key }];
      for (const [i, agent] of targets.entries()) {
        // Each server is added through another console, so with two their check-ins arrive at both.
        const added = await call(
          'POST',
          '/api/servers',
          { product_id: product.id, name: `edge-${i + 1}`, api_url: agent.url, api_key: agent.key },
          i,
        );
        assert.equal(added.status, 201, JSON.stringify(added.body));
        serverIds.push(added.body.data.server.id);
      }
    });

    after(async () => {
      for (const agent of agents) await agent.stop();
      await third?.stop();
      for (const c of consoles) await c.kill();
      dir.remove();
    });

    test('a pattern ban on one agent is banned on the others, the stopped one after it restarts', async () => {
      const policy = await call('POST', '/api/fleet/policies', {
        name: 'pattern bans everywhere',
        trigger: 'pattern',
        scope: 'all',
      });
      assert.equal(policy.status, 201, JSON.stringify(policy.body));
      assert.equal(policy.body.data.policy.duration_s, null);

      await third!.stop();
      const pattern = await call('POST', `/api/servers/${serverIds[0]}/control?path=block-pattern`, {
        name: 'app-login',
        file: logFile,
        regex: 'login failed for (?<ip>\\S+)',
        threshold: 2,
        window_s: 60,
        ban_s: 600,
      });
      assert.equal(pattern.status, 200, JSON.stringify(pattern.body));
      appendFileSync(logFile, `login failed for ${ATTACKER}\nlogin failed for ${ATTACKER}\n`);

      const own = await eventually('the first agent bans the attacker', () => held(0));
      assert.equal(own.source, 'attack', 'its own ban, not the fleet’s');
      const propagated = await eventually('the second agent gets the ban', () => held(1));
      assert.match(propagated.note ?? '', /^fleet:\d+ pattern app-login on edge-1/);

      const lookup = await eventually('the stopped server is pending with a reason', async () => {
        const res = await call('GET', `/api/fleet/addresses?ip=${ATTACKER}`);
        const entry = res.body.data.entries[0];
        const pending = entry?.servers.find((s: { server_id: number }) => s.server_id === serverIds[2]);
        return pending?.state === 'pending' && pending.reason ? entry : undefined;
      });
      assert.equal(lookup.list, 'black');
      assert.deepEqual(lookup.origin, {
        kind: 'pattern',
        server_id: serverIds[0],
        server_name: 'edge-1',
        event: 'pattern app-login',
      });
      assert.ok(lookup.expires_at > lookup.created_at, 'for as long as the first server bans it');
      const second = lookup.servers.find((s: { server_id: number }) => s.server_id === serverIds[1]);
      assert.equal(second.state, 'applied');
      assert.ok(second.applied_at >= lookup.created_at);
      assert.equal(
        lookup.servers.some((s: { server_id: number }) => s.server_id === serverIds[0]),
        false,
        'the first server keeps its own ban',
      );

      await third!.start();
      const late = await eventually('the restarted agent gets the ban it missed', () => held(2), 60_000);
      assert.match(late.note ?? '', /^fleet:/);
      const after = (await call('GET', `/api/fleet/addresses?ip=${ATTACKER}`)).body.data.entries[0];
      assert.deepEqual(
        after.servers.map((s: { state: string }) => s.state),
        ['applied', 'applied'],
      );
      assert.deepEqual(after.counts, { applied: 2, pending: 0, failed: 0 });
    });

    test('a propagated ban reported back is not propagated again, and each ban is applied once', async () => {
      // Every agent reports what it holds in a check-in the console has wholly handled before the
      // entries are counted: the console writes last_seen first and the reported bans after, and an
      // agent sends its next check-in only once the answer came, so the second new last_seen proves it.
      await Promise.all(serverIds.map((_, i) => checkIns(i, 2)));
      const entries = (await call('GET', '/api/fleet/entries?list=black')).body.data.entries;
      assert.equal(entries.length, 1, JSON.stringify(entries));
      const log = (await call('GET', '/api/audit?limit=100')).body.data.entries as {
        action: string;
        server_name: string | null;
        method: string | null;
        status: number;
      }[];
      const applied = log.filter((e) => e.action === 'fleet.apply' && e.method === 'POST' && e.status === 200);
      assert.deepEqual(applied.map((e) => e.server_name).sort(), ['edge-2', 'edge-3'], 'once on each server');
      assert.equal(log.filter((e) => e.action === 'fleet.entry').length, 1, 'one propagated ban');
    });

    test('one action lifts the address everywhere, and every step is in the audit log', async () => {
      const lifted = await call('DELETE', `/api/fleet/addresses?ip=${ATTACKER}`);
      assert.equal(lifted.status, 200, JSON.stringify(lifted.body));
      assert.equal(lifted.body.data.lifted, 1);
      for (const i of [0, 1, 2]) {
        await eventually(`edge-${i + 1} drops the ban`, async () => ((await held(i)) === undefined ? true : undefined));
      }
      assert.deepEqual((await call('GET', `/api/fleet/addresses?ip=${ATTACKER}`)).body.data.entries, []);

      const log = (await call('GET', '/api/audit?limit=100')).body.data.entries as {
        action: string;
        actor: string;
        actor_kind: string;
        server_name: string | null;
        method: string | null;
        path: string | null;
        summary: string;
      }[];
      const steps = log
        .slice()
        .reverse()
        .map((e) => `${e.action} ${e.method ?? ''} ${e.path ?? ''} ${e.server_name ?? ''}`.trim());
      assert.ok(steps.includes('fleet.policy POST fleet/policies'), steps.join('\n'));
      assert.ok(steps.includes('control.write POST block-pattern edge-1'), steps.join('\n'));
      assert.ok(steps.includes('fleet.entry POST fleet/entries edge-1'), steps.join('\n'));
      assert.ok(
        steps.some((s) => /^fleet\.entry DELETE fleet\/entries\/\d+$/.test(s)),
        steps.join('\n'),
      );
      for (const name of ['edge-1', 'edge-2', 'edge-3'])
        assert.ok(
          steps.includes(`fleet.apply DELETE blacklist ${name}`),
          `${name} removal logged:\n${steps.join('\n')}`,
        );
      const propagation = log.find((e) => e.action === 'fleet.entry' && e.method === 'POST')!;
      assert.equal(propagation.actor_kind, 'console');
      assert.match(propagation.actor, /^fleet policy \d+$/);
      assert.match(propagation.summary, new RegExp(`^${ATTACKER.replaceAll('.', '\\.')} banned on edge-1`));
      const lift = log.find((e) => e.action === 'fleet.entry' && e.method === 'DELETE')!;
      assert.equal(lift.actor, `fleet-prot-${process.pid}@example.com`);
    });

    test('a fleet list filled at once reaches every server', async () => {
      const ips = Array.from({ length: 40 }, (_, i) => `192.0.2.${i + 10}`);
      const added = await Promise.all(
        ips.map((ip, i) => call('POST', '/api/fleet/entries', { list: 'black', ip, scope: 'all' }, i)),
      );
      assert.deepEqual(
        added.map((a) => a.status),
        ips.map(() => 201),
      );
      await eventually(
        'every entry applied on the three servers',
        async () => {
          const entries = (await call('GET', '/api/fleet/entries?list=black')).body.data.entries;
          return entries.length === 40 && entries.every((e: { counts: { applied: number } }) => e.counts.applied === 3)
            ? true
            : undefined;
        },
        60_000,
      );
      for (const i of [0, 1, 2]) {
        const res = await call('GET', `/api/servers/${serverIds[i]}/control?path=blacklist`);
        const fleet = res.body.entries.filter((e: { note?: string }) => /^fleet:\d+ /.test(e.note ?? ''));
        assert.deepEqual(fleet.map((e: { ip: string }) => e.ip).sort(), [...ips].sort(), `edge-${i + 1}`);
      }
    });

    test('a server that joins a scope by its tags gets the entry; one that leaves drops it but keeps its own', async () => {
      const ip = '203.0.113.99';
      const holds = async (server: number) => {
        const res = await call('GET', `/api/servers/${serverIds[server]}/control?path=blacklist`);
        assert.equal(res.status, 200, JSON.stringify(res.body));
        return res.body.entries.find((e: { ip: string }) => e.ip === ip) as { note?: string } | undefined;
      };
      const tag = async (server: number, tags: string[]) =>
        assert.equal((await call('PATCH', `/api/servers/${serverIds[server]}`, { tags }, server)).status, 200);
      await tag(1, ['edge']);
      await tag(2, ['edge']);
      // edge-3 bans the address of its own first (a user's entry, not the fleet's).
      const own = await call('POST', `/api/servers/${serverIds[2]}/control?path=blacklist`, { ip, note: 'by hand' });
      assert.equal(own.status, 200, JSON.stringify(own.body));
      const added = await call('POST', '/api/fleet/entries', { list: 'black', ip, scope: 'tags', tags: ['edge'] });
      assert.equal(added.status, 201, JSON.stringify(added.body));
      const applied = (want: number) =>
        eventually(`the entry applied on ${want} servers`, async () => {
          const [entry] = (await call('GET', `/api/fleet/addresses?ip=${ip}`)).body.data.entries;
          return entry?.counts.applied === want && entry.counts.pending === 0 ? entry : undefined;
        });
      await applied(2);
      assert.equal(await holds(0), undefined, 'edge-1 is not tagged edge');
      assert.equal((await holds(2))?.note, 'by hand', 'the fleet does not overwrite a server’s own entry');

      await tag(0, ['edge']);
      await applied(3);
      assert.match((await holds(0))?.note ?? '', /^fleet:\d+ /, 'edge-1 joined the scope and got it');

      await tag(1, []);
      await tag(2, []);
      await eventually('edge-2 drops the propagated entry', async () =>
        (await holds(1)) === undefined ? true : undefined,
      );
      const [entry] = (await call('GET', `/api/fleet/addresses?ip=${ip}`)).body.data.entries;
      const third = await eventually('edge-3 settles', async () => {
        const app = (
          (await call('GET', `/api/fleet/addresses?ip=${ip}`)).body.data.entries[0].servers as {
            server_id: number;
            want: string;
            state: string;
            reason: string | null;
          }[]
        ).find((s) => s.server_id === serverIds[2]);
        return app?.want === 'absent' && app.state === 'applied' ? app : undefined;
      });
      assert.equal(third.reason, 'kept: the server held this address before the fleet entry');
      assert.equal((await holds(2))?.note, 'by hand', 'edge-3 keeps its own ban as it was');
      assert.match((await holds(0))?.note ?? '', /^fleet:/, 'edge-1 is still in the scope');
      assert.equal(entry.lifted_at, null);
    });
  });
}
