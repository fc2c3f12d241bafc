import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  type AgentProcess,
  accountWithProduct,
  type ConsoleCall,
  type ConsoleProcess,
  eventually,
  startAgent,
  startConsoleProcess,
  tcpRelay,
  tempDir,
} from './support/processes.js';

const pgUrl = process.env.PALISADE_TEST_DATABASE_URL;
const redisUrl = process.env.PALISADE_TEST_REDIS_URL;
if (process.env.CI && (!pgUrl || !redisUrl)) {
  throw new Error(
    'CI: PALISADE_TEST_DATABASE_URL and PALISADE_TEST_REDIS_URL must be set; the link relay suite would be skipped',
  );
}

/**
 * Two console processes on PostgreSQL, with Redis or without it; the agent's link ends on the first.
 * A call landing on the second is relayed to the first — through Redis pub/sub, or through
 * PostgreSQL LISTEN/NOTIFY when no Redis is configured — with the direct path cut.
 */
function relaySuite(bus: 'Redis' | 'PostgreSQL') {
  describe(`an outbound link held by another console process, relayed through ${bus}`, {
    skip: pgUrl && (redisUrl || bus === 'PostgreSQL') ? false : 'no PostgreSQL and Redis',
  }, () => {
    const dir = tempDir('palisade-link-relay-');
    const consoles: ConsoleProcess[] = [];
    let agent: AgentProcess;
    let relay: Awaited<ReturnType<typeof tcpRelay>>;
    let call: ConsoleCall;
    let serverId = 0;

    before(async () => {
      const env = {
        PALISADE_DATA_DIR: dir.path,
        PALISADE_DATABASE_URL: pgUrl!,
        PALISADE_DATABASE_SCHEMA: `link_relay_${bus.toLowerCase()}_${process.pid}`,
        ...(bus === 'Redis'
          ? { PALISADE_REDIS_URL: redisUrl!, PALISADE_REDIS_PREFIX: `palisade-link-test-${process.pid}-${Date.now()}` }
          : {}),
        PALISADE_ALLOW_PRIVATE_TARGETS: '1',
        PALISADE_BOOTSTRAP_ADMIN: '0',
        PALISADE_CHECKIN_INTERVAL_S: '5',
      };
      consoles.push(await startConsoleProcess(env));
      consoles.push(await startConsoleProcess(env));
      agent = await startAgent({
        'checkin.interval_s': '5',
        'console.connect': 'outbound',
      });
      relay = await tcpRelay(Number(new URL(agent.url).port));
      const a = consoles[0]!.url;
      const account = await accountWithProduct(a, `relay-${bus}-${process.pid}@example.com`);
      call = account.call;
      // Added through the first process: the agent is enrolled with its address, so its link ends there.
      const added = await call(a, 'POST', '/api/servers', {
        product_id: account.productId,
        name: 'relayed',
        api_url: relay.url,
        api_key: agent.key,
      });
      assert.equal(added.status, 201, JSON.stringify(added.body));
      serverId = added.body.data.server.id;
      const switched = await call(a, 'PUT', `/api/servers/${serverId}/connection`, { mode: 'outbound' });
      assert.equal(switched.status, 200, JSON.stringify(switched.body));
      await eventually('the link up on the first process', async () => {
        const c = (await call(a, 'GET', `/api/servers/${serverId}`)).body.data.server.connection;
        return c.link === 'up' ? true : undefined;
      });
      await relay.cut();
    });

    after(async () => {
      await agent?.stop();
      await relay?.cut();
      for (const c of consoles) await c.kill();
      dir.remove();
    });

    test('metrics and a blacklist write through the second process reach the agent over the first one’s link', async () => {
      const b = consoles[1]!.url;
      const seen = (await call(b, 'GET', `/api/servers/${serverId}`)).body.data.server.connection;
      assert.deepEqual(seen, { mode: 'outbound', link: 'up', since: null }, 'held by the other process');
      const metrics = await call(b, 'GET', `/api/servers/${serverId}/metrics`);
      assert.equal(metrics.status, 200, JSON.stringify(metrics.body));
      assert.equal(typeof metrics.body.cpu.pct, 'number');
      const added = await call(b, 'POST', `/api/servers/${serverId}/control?path=blacklist`, { ip: '192.0.2.77' });
      assert.ok(added.status >= 200 && added.status < 300, JSON.stringify(added.body));
      const lookup = await call(
        consoles[0]!.url,
        'GET',
        `/api/servers/${serverId}/control?path=blacklist&ip=192.0.2.77`,
      );
      assert.equal(lookup.body.decided_by, 'blacklist');
    });

    test('the agent stopped: the second process answers 502 agent unreachable', async () => {
      await new Promise((resolve) => {
        agent.child.once('exit', resolve);
        agent.child.kill('SIGTERM');
      });
      const down = await call(consoles[1]!.url, 'GET', `/api/servers/${serverId}/metrics`);
      assert.equal(down.status, 502);
      assert.equal(down.body.error, 'agent unreachable');
    });
  });
}

relaySuite('Redis');
relaySuite('PostgreSQL');
