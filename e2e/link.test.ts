import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { hashToken } from '@palisade/protocol';
import { linkProof } from '@palisade/protocol/link';
import { WebSocket } from 'ws';
import {
  type AgentProcess,
  accountWithProduct,
  type ConsoleCall,
  type ConsoleProcess,
  eventually,
  runAgentDaemon,
  startAgent,
  startConsoleProcess,
  tcpRelay,
  tempDir,
} from './support/processes.js';

/**
 * An agent with `console.connect = outbound` under a real console: once its link is up, the
 * console's calls reach it through the link even with the direct path cut; they fail as 502 while
 * the agent is down and work again when it is back; a newer link replaces the older.
 */
describe('the outbound link', () => {
  const dir = tempDir('palisade-link-');
  let consoleProc: ConsoleProcess | undefined;
  let agent: AgentProcess;
  let restarted: Awaited<ReturnType<typeof runAgentDaemon>> | undefined;
  let relay: Awaited<ReturnType<typeof tcpRelay>>;
  let session: ConsoleCall;
  let serverId = 0;
  const base = () => consoleProc!.url;
  const port = () => new URL(base()).port;
  const call = (method: string, path: string, body?: unknown) => session(base(), method, path, body);
  const connection = async () => (await call('GET', `/api/servers/${serverId}`)).body.data.server.connection;
  const daemonToken = () =>
    (JSON.parse(readFileSync(join(agent.stateDir, 'enrolment.json'), 'utf8')) as { token: string }).token;

  before(async () => {
    consoleProc = await startConsoleProcess({
      PALISADE_DATA_DIR: dir.path,
      PALISADE_ALLOW_PRIVATE_TARGETS: '1',
      PALISADE_BOOTSTRAP_ADMIN: '0',
      PALISADE_CHECKIN_INTERVAL_S: '5',
    });
    agent = await startAgent({
      'checkin.interval_s': '5',
      'console.connect': 'outbound',
    });
    relay = await tcpRelay(Number(new URL(agent.url).port));
    const account = await accountWithProduct(base(), `link-${process.pid}@example.com`);
    session = account.call;
    const added = await call('POST', '/api/servers', {
      product_id: account.productId,
      name: 'behind-nat',
      api_url: relay.url,
      api_key: agent.key,
    });
    assert.equal(added.status, 201, JSON.stringify(added.body));
    serverId = added.body.data.server.id;
    // The agent's own link does not switch a server added by its address: the account does (audited).
    assert.equal(added.body.data.server.connection.mode, 'direct');
    const switched = await call('PUT', `/api/servers/${serverId}/connection`, { mode: 'outbound' });
    assert.equal(switched.status, 200, JSON.stringify(switched.body));
  });

  after(async () => {
    await restarted?.stop();
    await agent?.stop();
    await relay?.cut().catch(() => {});
    await consoleProc?.kill();
    dir.remove();
  });

  test('a link refused before the upgrade: no token or a wrong one is 401', async () => {
    for (const authorization of [undefined, `Bearer dmn_${'x'.repeat(40)}`]) {
      const status = await new Promise<number>((resolve) => {
        const ws = new WebSocket(`ws://127.0.0.1:${port()}/api/agent/link`, {
          headers: authorization ? { authorization } : {},
        });
        ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
        ws.on('open', () => resolve(101));
        ws.on('error', () => {});
      });
      assert.equal(status, 401, String(authorization));
    }
  });

  test('with the direct path cut, metrics and a blacklist write go through the link', async () => {
    const up = await eventually('the link up', async () => {
      const c = await connection();
      return c.mode === 'outbound' && c.link === 'up' ? c : undefined;
    });
    assert.equal(typeof up.since, 'number');
    await relay.cut();
    const direct = await fetch(`${relay.url}/health`).then(
      () => 'answered',
      () => 'refused',
    );
    assert.equal(direct, 'refused', 'the direct path is cut');

    const metrics = await call('GET', `/api/servers/${serverId}/metrics`);
    assert.equal(metrics.status, 200, JSON.stringify(metrics.body));
    assert.equal(typeof metrics.body.cpu.pct, 'number', "the agent's own snapshot");
    const added = await call('POST', `/api/servers/${serverId}/control?path=blacklist`, {
      ip: '203.0.113.7',
      note: 'through the link',
    });
    assert.ok(added.status >= 200 && added.status < 300, JSON.stringify(added.body));
    const lookup = await call('GET', `/api/servers/${serverId}/control?path=blacklist&ip=203.0.113.7`);
    assert.equal(lookup.status, 200, JSON.stringify(lookup.body));
    assert.equal(lookup.body.decided_by, 'blacklist');
    const detail = await call('GET', `/api/servers/${serverId}`);
    assert.equal(detail.body.data.server.state, 'online');
  });

  test('the agent stopped: 502 agent unreachable; started again: it reconnects by itself', async () => {
    await new Promise((resolve) => {
      agent.child.once('exit', resolve);
      agent.child.kill('SIGTERM');
    });
    const down = await call('GET', `/api/servers/${serverId}/metrics`);
    assert.equal(down.status, 502);
    assert.equal(down.body.error, 'agent unreachable');
    assert.equal((await connection()).link, 'down');

    // The same state dir and config: the same key and daemon token.
    restarted = await runAgentDaemon(agent.configFile, agent.stateDir);
    const back = await eventually('metrics through the new link', async () => {
      const res = await call('GET', `/api/servers/${serverId}/metrics`);
      return res.status === 200 ? res : undefined;
    });
    assert.equal(back.status, 200);
    assert.equal((await connection()).link, 'up');
  });

  test('a newer link replaces the older once it proved the agent key: calls go down the newer, and the older is closed', async () => {
    // A second link with the server's daemon token, proving the key and answering as an agent would.
    const second = new WebSocket(`ws://127.0.0.1:${port()}/api/agent/link`, {
      headers: { authorization: `Bearer ${daemonToken()}` },
    });
    const asked: string[] = [];
    second.on('message', (data) => {
      const frame = JSON.parse(data.toString()) as { type: string; id: string; path: string; nonce: string };
      if (frame.type === 'challenge') {
        second.send(JSON.stringify({ type: 'proof', proof: linkProof(hashToken(agent.key), frame.nonce) }));
        return;
      }
      if (frame.type !== 'request') return;
      asked.push(frame.path);
      const body = Buffer.from(JSON.stringify({ status: 'ok', version: '9.9.9', uptime_s: 1 })).toString('base64');
      second.send(
        JSON.stringify({ type: 'response', id: frame.id, status: 200, content_type: 'application/json', body }),
      );
    });
    await new Promise((resolve, reject) => {
      second.once('open', resolve);
      second.once('error', reject);
    });
    // The link replaces the agent's only once its proof is checked, which follows the open: the
    // console then asks /health down it at once (services/servers/agents.ts, links.open), so that
    // first request says it is in use.
    await eventually('the newer link proved and asked for /health', async () => (asked.length >= 1 ? true : undefined));
    const test = await call('POST', '/api/servers/test', { server_id: serverId });
    assert.equal(test.status, 200, JSON.stringify(test.body));
    assert.equal(test.body.data.agent_version, '9.9.9', 'answered down the newer link');
    // Its own /health check when it came up, then the test's.
    assert.ok(asked.length >= 1 && asked.every((path) => path === '/health'), asked.join(', '));
    // The agent's link was closed; it opens its own again (after its back-off), which replaces this one.
    const closed = await new Promise<number>((resolve) => second.once('close', resolve));
    assert.equal(typeof closed, 'number');
    const again = await eventually('the agent answering again', async () => {
      const res = await call('POST', '/api/servers/test', { server_id: serverId });
      return res.body.data?.agent_version && res.body.data.agent_version !== '9.9.9' ? res : undefined;
    });
    assert.equal(again.status, 200);
  });
});
