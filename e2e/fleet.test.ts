import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertMatchesOpenApi } from '@palisade/console/openapi-check';
import { agentMetricsSchema, serverDetailSchema, serverSummarySchema } from '@palisade/protocol';
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

/** A real console and a real agent on loopback: add, check in, score, proxies, key rotation, going offline. */
describe('fleet end to end: a real console and a real agent', () => {
  const dir = tempDir('palisade-fleet-');
  let consoleProc: ConsoleProcess;
  let agent: AgentProcess;
  let cookie = '';
  let strangerCookie = '';
  let token = '';
  let serverId = 0;
  const responses: string[] = [];

  async function call(
    method: string,
    path: string,
    options: { body?: unknown; cookie?: string; bearer?: string } = {},
  ) {
    const res = await fetch(`${consoleProc.url}${path}`, {
      method,
      headers: {
        ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...(options.cookie ? { cookie: options.cookie } : {}),
        ...(options.bearer ? { authorization: `Bearer ${options.bearer}` } : {}),
      },
      ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
    });
    const text = await res.text();
    responses.push(text);
    // Every answer here is held to the console's OpenAPI document too (v1 and dashboard routes).
    if (text) assertMatchesOpenApi(path, res.status, JSON.parse(text), method);
    // biome-ignore lint/suspicious/noExplicitAny: test answers are checked field by field
    return { status: res.status, body: text ? (JSON.parse(text) as any) : null };
  }

  before(async () => {
    consoleProc = await startConsoleProcess({
      PALISADE_DATA_DIR: dir.path,
      PALISADE_ALLOW_PRIVATE_TARGETS: '1',
      PALISADE_BOOTSTRAP_ADMIN: '0',
      PALISADE_CHECKIN_INTERVAL_S: '5',
      PALISADE_LOG_LEVEL: 'info',
    });
    agent = await startAgent({ 'checkin.interval_s': '5' });
    cookie = await signUp(consoleProc.url, {
      email: `owner-${process.pid}@example.com`,
      password: 'fleet-password',
      name: `owner-${process.pid}@example.com`,
    });
    strangerCookie = await signUp(consoleProc.url, {
      email: `stranger-${process.pid}@example.com`,
      password: 'fleet-password',
      name: `stranger-${process.pid}@example.com`,
    });
    token = (await call('POST', '/api/tokens', { cookie, body: { name: 'e2e' } })).body.data.token;
  });

  after(async () => {
    await agent?.stop();
    await consoleProc?.kill();
    dir.remove();
  });

  test('adding the agent checks its health, stores the key encrypted and enrols it', async () => {
    const product = (await call('POST', '/api/products', { cookie, body: { catalog_id: 1 } })).body.data.product;
    const wrongKey = await call('POST', '/api/servers', {
      cookie,
      body: { product_id: product.id, name: 'edge-1', api_url: agent.url, api_key: `${agent.key.slice(0, -6)}AAAAAA` },
    });
    assert.equal(wrongKey.status, 400);
    assert.match(wrongKey.body.error, /^api_url: the agent rejected the key/);
    const tested = await call('POST', '/api/servers/test', {
      cookie,
      body: { api_url: agent.url, api_key: agent.key },
    });
    assert.equal(tested.body.data.reachable, true);
    assert.equal(tested.body.data.status, 200);
    assert.equal(typeof tested.body.data.agent_version, 'string');
    const added = await call('POST', '/api/servers', {
      cookie,
      body: { product_id: product.id, name: 'edge-1', api_url: agent.url, api_key: agent.key },
    });
    assert.equal(added.status, 201, JSON.stringify(added.body));
    serverId = added.body.data.server.id;
    assert.equal(added.body.data.server.enrolled, true);
  });

  test('the agent checks in: v1 shows it online with facts, a latest sample and a score', async () => {
    const detail = await eventually('a check-in', async () => {
      const res = await call('GET', `/api/v1/servers/${serverId}`, { bearer: token });
      return res.body.data.latest_sample ? res.body.data : undefined;
    });
    serverDetailSchema.strict().parse(detail);
    assert.equal(detail.online, true);
    assert.equal(typeof detail.facts.os, 'string');
    assert.equal(typeof detail.facts.kernel, 'string');
    assert.ok(Number.isInteger(detail.facts.cores) && detail.facts.cores >= 1);
    assert.ok(detail.score > 0 && detail.score <= 1000);
    assert.equal(
      Object.values(detail.score_components as Record<string, number>).reduce((a, b) => a + b, 0),
      detail.score,
    );
    const list = await call('GET', '/api/v1/servers', { bearer: token });
    assert.equal(list.body.data.servers.length, 1);
    serverSummarySchema.strict().parse(list.body.data.servers[0]);
    // The agent's check-in carries its active attack count, which the fleet page counts (docs/fleet.md).
    const fleet = (await call('GET', '/api/servers', { cookie })).body.data;
    assert.equal(fleet.servers[0].state, 'online');
    assert.equal(fleet.servers[0].attacks_active, 0);
    assert.deepEqual(fleet.counts, { online: 1, late: 0, unreachable: 0, offline: 0, under_attack: 0 });
  });

  test('the metrics proxy passes the agent snapshot through; the control proxy forwards status and body', async () => {
    const metrics = await call('GET', `/api/servers/${serverId}/metrics`, { cookie });
    assert.equal(metrics.status, 200);
    assert.equal(typeof metrics.body.agent.version, 'string');
    assert.equal(typeof metrics.body.cpu.pct, 'number');
    // The snapshot is what packages/protocol/src/agent-api.ts describes, no more and no less.
    agentMetricsSchema.strict().parse(metrics.body);
    assert.ok('alerter' in metrics.body);
    const direct = await fetch(`${agent.url}/whitelist`, { headers: { authorization: `Bearer ${agent.key}` } });
    const proxied = await call('GET', `/api/servers/${serverId}/control?path=whitelist`, { cookie });
    assert.equal(proxied.status, direct.status);
    assert.deepEqual(proxied.body, await direct.json());
    const refused = await call('GET', `/api/servers/${serverId}/control?path=..%2Fmetrics`, { cookie });
    assert.equal(refused.status, 400);
    assert.equal(refused.body.error, 'unknown control path');
  });

  test('DELETE through the control proxy forwards its JSON body; an agent error passes through as its JSON', async () => {
    const path = `/api/servers/${serverId}/control?path=whitelist`;
    assert.equal((await call('POST', path, { cookie, body: { ip: '192.0.2.77' } })).status, 200);
    const listed = async () => JSON.stringify((await call('GET', path, { cookie })).body);
    assert.match(await listed(), /192\.0\.2\.77/);
    const removed = await call('DELETE', path, { cookie, body: { ip: '192.0.2.77' } });
    assert.equal(removed.status, 200, JSON.stringify(removed.body));
    assert.doesNotMatch(await listed(), /192\.0\.2\.77/);
    // The agent's own refusal comes back with its status and its message, not an empty body.
    const direct = await fetch(`${agent.url}/whitelist`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${agent.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ip: '010.0.0.1' }),
    });
    const refused = await call('DELETE', path, { cookie, body: { ip: '010.0.0.1' } });
    assert.equal(refused.status, direct.status);
    assert.equal(refused.status, 400);
    assert.deepEqual(refused.body, await direct.json());
    assert.match(refused.body.error, /ip/);
  });

  test('another account sees 404 for all of it', async () => {
    for (const path of [
      `/api/servers/${serverId}`,
      `/api/servers/${serverId}/metrics`,
      `/api/servers/${serverId}/control?path=whitelist`,
      `/api/servers/${serverId}/section?name=score`,
    ]) {
      assert.equal((await call('GET', path, { cookie: strangerCookie })).status, 404, path);
    }
    const strangerToken = (await call('POST', '/api/tokens', { cookie: strangerCookie, body: { name: 'x' } })).body.data
      .token;
    assert.equal((await call('GET', `/api/v1/servers/${serverId}`, { bearer: strangerToken })).status, 404);
    assert.deepEqual((await call('GET', '/api/v1/servers', { bearer: strangerToken })).body.data.servers, []);
  });

  test('a rotated agent key gives a clear 502 until the new key is saved', async () => {
    const oldKey = agent.key;
    const newKey = agentKey(agent.stateDir, agent.configFile);
    const rejected = await call('GET', `/api/servers/${serverId}/metrics`, { cookie });
    assert.equal(rejected.status, 502);
    assert.match(rejected.body.error, /rejected the key/);
    const saved = await call('PATCH', `/api/servers/${serverId}`, { cookie, body: { api_key: newKey } });
    assert.equal(saved.status, 200);
    assert.equal((await call('GET', `/api/servers/${serverId}/metrics`, { cookie })).status, 200);
    for (const key of [oldKey, newKey]) {
      assert.ok(!responses.some((r) => r.includes(key)), 'no response ever carried the agent key');
      assert.ok(!consoleProc.output().includes(key), 'the console log never carried the agent key');
    }
    agent.key = newKey;
  });

  test('when the agent stops: unreachable at once, offline after two minutes, online again after a restart', async () => {
    // Only the daemon stops: its config and state directory stay for the restart below.
    const first = agent;
    first.child.kill('SIGTERM');
    await eventually('the agent to exit', async () =>
      first.child.exitCode !== null || first.child.signalCode !== null ? true : undefined,
    );
    const metrics = await call('GET', `/api/servers/${serverId}/metrics`, { cookie });
    assert.equal(metrics.status, 502);
    assert.deepEqual(metrics.body, { error: 'agent unreachable', code: 'agent_error' });
    // The failed call is recorded: the server is unreachable at once, while v1 keeps the two-minute rule.
    const overview = (await call('GET', `/api/servers/${serverId}/section?name=overview`, { cookie })).body.data;
    assert.equal(overview.state, 'unreachable');
    assert.match(overview.state_reason, /calls to the agent have failed for \d+ s: agent unreachable$/);
    assert.equal(overview.online, true);
    assert.equal((await call('GET', `/api/v1/servers/${serverId}`, { bearer: token })).body.data.online, true);
    const unreachable = (await call('GET', '/api/servers', { cookie })).body.data;
    assert.deepEqual(unreachable.counts, { online: 0, late: 0, unreachable: 1, offline: 0, under_attack: 0 });
    const offline = await eventually(
      'the server to go offline',
      async () => {
        const res = await call('GET', `/api/v1/servers/${serverId}`, { bearer: token });
        return res.body.data.online === false ? res.body.data : undefined;
      },
      150_000,
    );
    assert.ok(offline.score < 1000);
    assert.ok(offline.score_notes.some((n: string) => n.startsWith('Last check-in')));
    const server = (await call('GET', `/api/servers/${serverId}`, { cookie })).body.data.server;
    assert.equal(server.state, 'offline');
    assert.match(server.state_reason, /^No check-in for \d+ min$/);
    assert.equal(server.last_known_score.at, server.last_seen, 'the last known score is the last check-in’s');
    assert.ok(server.last_known_score.score > server.score, 'an offline server does not keep its live score');
    assert.equal(server.attacks_active, null);
    const listed = (await call('GET', '/api/servers', { cookie })).body.data;
    assert.deepEqual(listed.counts, { online: 0, late: 0, unreachable: 0, offline: 1, under_attack: 0 });

    // The same agent, restarted (on a new port): it checks in again, and the console reaches it at its new address.
    const restarted = await runAgentDaemon(agent.configFile, agent.stateDir);
    agent = {
      ...first,
      ...restarted,
      async stop(signal) {
        await restarted.stop(signal);
        await first.stop(); // the first daemon has exited; this removes the directory
      },
    };
    const moved = await call('PATCH', `/api/servers/${serverId}`, {
      cookie,
      body: { api_url: restarted.url, api_key: agent.key },
    });
    assert.equal(moved.status, 200, JSON.stringify(moved.body));
    await eventually('a check-in after the restart', async () => {
      const res = await call('GET', `/api/servers/${serverId}`, { cookie });
      return res.body.data.server.state !== 'offline' ? true : undefined;
    });
    assert.equal((await call('GET', `/api/servers/${serverId}/metrics`, { cookie })).status, 200);
    const back = (await call('GET', `/api/servers/${serverId}`, { cookie })).body.data.server;
    assert.equal(back.state, 'online');
    assert.equal(back.last_known_score, null);
  });
});
