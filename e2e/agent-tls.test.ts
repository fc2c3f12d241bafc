import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { AgentClient, PalisadeNetworkError } from '@palisade/sdk';
import { closedPort } from '@palisade/testkit';
import {
  type AgentProcess,
  agentKey,
  type ConsoleProcess,
  eventually,
  runAgentDaemon,
  runCli,
  startAgent,
  startConsoleProcess,
  tempDir,
} from './support/processes.js';

const SDK_CLI = fileURLToPath(new URL('../../packages/sdk/dist/src/cli.js', import.meta.url));

const fingerprintIn = (output: string) => /TLS certificate SHA-256 fingerprint: ([0-9A-F:]{95})/.exec(output)?.[1];

/**
 * An https listener with a certificate the agent made (another state dir): it counts connections
 * and requests, so a test can show a wrong-pin peer never received one (nor the key).
 */
async function impostor(dir: string) {
  const stateDir = join(dir, 'impostor-state');
  const configFile = join(dir, 'impostor.conf');
  writeFileSync(configFile, 'metrics.listen = 127.0.0.1:0\nmetrics.tls = on\n');
  agentKey(stateDir, configFile); // makes the certificate, as for a real agent
  const cert = readFileSync(join(stateDir, 'tls-cert.pem'), 'utf8');
  let connections = 0;
  const requests: string[] = [];
  const server = https.createServer({ key: readFileSync(join(stateDir, 'tls-key.pem'), 'utf8'), cert }, (req, res) => {
    requests.push(`${req.method} ${req.url} ${req.headers.authorization ?? ''}`);
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok","version":"0.0.0"}');
  });
  server.on('connection', () => {
    connections += 1;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    fingerprint: new X509Certificate(cert).fingerprint256,
    requests,
    connections: () => connections,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}

const palisade = (args: string[]) => runCli(SDK_CLI, args, { HOME: dir.path });

const dir = tempDir('palisade-tls-');

/** A real console and a real agent serving TLS with its own certificate, pinned by fingerprint. */
describe('agents over TLS: the console and the SDK pin the agent certificate', () => {
  let consoleProc: ConsoleProcess;
  let agent: AgentProcess;
  let restarted: Awaited<ReturnType<typeof runAgentDaemon>> | null = null;
  let fake: Awaited<ReturnType<typeof impostor>>;
  let cookie = '';
  let productId = 0;
  let serverId = 0;
  let pin = '';

  async function call(method: string, path: string, body?: unknown) {
    const res = await fetch(`${consoleProc.url}${path}`, {
      method,
      headers: { cookie, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    // biome-ignore lint/suspicious/noExplicitAny: test answers are checked field by field
    return { status: res.status, body: text ? (JSON.parse(text) as any) : null };
  }

  before(async () => {
    consoleProc = await startConsoleProcess({
      PALISADE_DATA_DIR: join(dir.path, 'console'),
      PALISADE_ALLOW_PRIVATE_TARGETS: '1',
      PALISADE_BOOTSTRAP_ADMIN: '0',
      PALISADE_CHECKIN_INTERVAL_S: '5',
      PALISADE_LOG_LEVEL: 'info',
      PALISADE_ACCESS_LOG: '1', // every request logged too, for the check that no line holds the key
    });
    agent = await startAgent({ 'metrics.listen': `127.0.0.1:${await closedPort()}`, 'metrics.tls': 'on' });
    pin = fingerprintIn(agent.output())!;
    assert.ok(pin, agent.output());
    assert.match(agent.url, /^https:\/\//);
    fake = await impostor(dir.path);
    const registered = await fetch(`${consoleProc.url}/api/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: `tls-${process.pid}@example.com`, password: 'tls-password', name: 'T' }),
    });
    assert.equal(registered.status, 201);
    cookie = registered.headers.get('set-cookie')!.split(';')[0]!;
    productId = (await call('POST', '/api/products', { catalog_id: 1 })).body.data.product.id;
  });

  after(async () => {
    await restarted?.stop();
    await agent?.stop();
    await fake?.close();
    await consoleProc?.kill();
    dir.remove();
  });

  test('an https agent without a pin is refused, naming the fingerprint it presented', async () => {
    const untrusted = new RegExp(
      `^tls_fingerprint: the agent's certificate is not signed by a trusted authority \\(DEPTH_ZERO_SELF_SIGNED_CERT\\); it presented ${pin}`,
    );
    const tested = await call('POST', '/api/servers/test', { api_url: agent.url, api_key: agent.key });
    assert.equal(tested.status, 200);
    assert.equal(tested.body.data.reachable, false);
    assert.match(tested.body.data.error, untrusted);
    const added = await call('POST', '/api/servers', {
      product_id: productId,
      name: 'tls-1',
      api_url: agent.url,
      api_key: agent.key,
    });
    assert.equal(added.status, 400);
    assert.match(added.body.error, untrusted);

    for (const bad of ['AB:CD', 'sha256:xyz', pin.replace(/:/g, ' '), `${pin}:00`]) {
      const res = await call('POST', '/api/servers/test', {
        api_url: agent.url,
        api_key: agent.key,
        tls_fingerprint: bad,
      });
      assert.equal(res.status, 400, String(bad));
      assert.match(res.body.error, /^tls_fingerprint: expected the SHA-256 fingerprint the agent prints/);
    }
    const plain = await call('POST', '/api/servers/test', {
      api_url: agent.url.replace('https:', 'http:'),
      api_key: agent.key,
      tls_fingerprint: pin,
    });
    assert.equal(plain.status, 400);
    assert.match(plain.body.error, /^tls_fingerprint: only for an https api_url/);
  });

  test('a wrong pin is refused in the handshake: the peer never receives a request or the key', async () => {
    const expected = `tls_fingerprint: the agent presented ${fake.fingerprint}, expected ${pin}`;
    const tested = await call('POST', '/api/servers/test', {
      api_url: fake.url,
      api_key: agent.key,
      tls_fingerprint: pin,
    });
    assert.equal(tested.status, 200);
    assert.deepEqual(tested.body.data, { reachable: false, status: null, latency_ms: null, error: expected });
    const added = await call('POST', '/api/servers', {
      product_id: productId,
      name: 'impostor',
      api_url: fake.url,
      api_key: agent.key,
      tls_fingerprint: pin,
    });
    assert.equal(added.status, 400);
    assert.equal(added.body.error, expected);
    assert.ok(fake.connections() >= 2, 'the console did connect');
    assert.deepEqual(fake.requests, [], 'no request, so no Authorization header, went to the wrong certificate');
  });

  test('the right pin works end to end: add, enrolment, health, check-ins and both proxies', async () => {
    const added = await call('POST', '/api/servers', {
      product_id: productId,
      name: 'tls-1',
      api_url: agent.url,
      api_key: agent.key,
      tls_fingerprint: pin.replace(/:/g, '').toLowerCase(), // either spelling; stored in the agent's
    });
    assert.equal(added.status, 201, JSON.stringify(added.body));
    serverId = added.body.data.server.id;
    assert.equal(added.body.data.server.enrolled, true, 'the enrolment went over the pinned connection');
    assert.equal(added.body.data.server.tls_fingerprint, pin);
    const tested = await call('POST', '/api/servers/test', { server_id: serverId });
    assert.equal(tested.body.data.reachable, true);
    assert.equal(tested.body.data.status, 200);

    const metrics = await call('GET', `/api/servers/${serverId}/metrics`);
    assert.equal(metrics.status, 200);
    assert.equal(typeof metrics.body.agent.version, 'string');
    const whitelist = await call('GET', `/api/servers/${serverId}/control?path=whitelist`);
    assert.equal(whitelist.status, 200, JSON.stringify(whitelist.body));
    const direct = await new AgentClient({ baseUrl: agent.url, key: agent.key, fingerprint: pin }).control(
      'GET',
      'whitelist',
    );
    assert.deepEqual(whitelist.body, direct);
    // A kept-alive connection verified under one pin never serves a call made with another.
    const otherPin = await call('POST', '/api/servers/test', {
      api_url: agent.url,
      api_key: agent.key,
      tls_fingerprint: fake.fingerprint,
    });
    assert.equal(otherPin.body.data.error, `tls_fingerprint: the agent presented ${pin}, expected ${fake.fingerprint}`);
    const attacks = await call('GET', `/api/servers/${serverId}/section?name=attacks`);
    assert.equal(attacks.body.data.available, true, JSON.stringify(attacks.body));
    await eventually('a check-in', async () => {
      const res = await call('GET', `/api/servers/${serverId}`);
      return res.body.data.server.online ? true : undefined;
    });
  });

  test('a regenerated certificate is refused everywhere until the new pin is saved', async () => {
    await agent.child.kill('SIGTERM');
    await eventually('the agent to stop', async () =>
      agent.child.exitCode !== null || agent.child.signalCode ? true : undefined,
    );
    rmSync(join(agent.stateDir, 'tls-key.pem'));
    rmSync(join(agent.stateDir, 'tls-cert.pem'));
    restarted = await runAgentDaemon(agent.configFile, agent.stateDir);
    const fresh = fingerprintIn(restarted.output())!;
    assert.ok(fresh && fresh !== pin, restarted.output());
    const mismatch = `tls_fingerprint: the agent presented ${fresh}, expected ${pin}`;

    for (const path of [`/api/servers/${serverId}/metrics`, `/api/servers/${serverId}/control?path=whitelist`]) {
      const res = await call('GET', path);
      assert.equal(res.status, 502, path);
      assert.deepEqual(res.body, { error: mismatch, code: 'agent_error' });
    }
    const tested = await call('POST', '/api/servers/test', { server_id: serverId });
    assert.equal(tested.body.data.error, mismatch);

    const wrong = 'AA:'.repeat(31).concat('AA');
    const refused = await call('PATCH', `/api/servers/${serverId}`, { tls_fingerprint: wrong });
    assert.equal(refused.status, 400);
    assert.equal(refused.body.error, `tls_fingerprint: the agent presented ${fresh}, expected ${wrong}`);
    assert.equal((await call('GET', `/api/servers/${serverId}`)).body.data.server.tls_fingerprint, pin, 'unchanged');

    const saved = await call('PATCH', `/api/servers/${serverId}`, { tls_fingerprint: fresh });
    assert.equal(saved.status, 200, JSON.stringify(saved.body));
    assert.equal(saved.body.data.server.tls_fingerprint, fresh);
    assert.equal((await call('GET', `/api/servers/${serverId}/metrics`)).status, 200);
    assert.equal((await call('GET', `/api/servers/${serverId}/control?path=whitelist`)).status, 200);
    pin = fresh;
  });

  test('the SDK and `palisade agent …` take the pin', async () => {
    const health = await new AgentClient({ baseUrl: agent.url, key: agent.key, fingerprint: pin }).health();
    assert.equal(health.status, 'ok');
    const wrongPin = fake.fingerprint;
    await assert.rejects(
      new AgentClient({ baseUrl: agent.url, key: agent.key, fingerprint: wrongPin }).health(),
      (err: Error) => err instanceof PalisadeNetworkError && err.message.includes(`is ${pin}, expected ${wrongPin}`),
    );
    await assert.rejects(
      new AgentClient({ baseUrl: agent.url, key: agent.key }).health(),
      (err: Error) => err instanceof PalisadeNetworkError && /SELF_SIGNED.*fingerprint/.test(err.message),
    );
    assert.throws(
      () => new AgentClient({ baseUrl: agent.url.replace('https:', 'http:'), key: agent.key, fingerprint: pin }),
      /https/,
    );

    const base = ['--agent-url', agent.url, '--agent-key', agent.key];
    const ok = await palisade(['agent', 'health', ...base, '--agent-fingerprint', pin.toLowerCase()]);
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /^ok, version /);
    const control = await palisade(['agent', 'control', 'whitelist', ...base, '--agent-fingerprint', pin, '--json']);
    assert.equal(control.code, 0, control.stderr);
    const wrong = await palisade(['agent', 'health', ...base, '--agent-fingerprint', wrongPin]);
    assert.equal(wrong.code, 6);
    assert.match(wrong.stderr, new RegExp(`fingerprint is ${pin}, expected ${wrongPin}`));
    const malformed = await palisade(['agent', 'health', ...base, '--agent-fingerprint', 'AB:CD']);
    assert.equal(malformed.code, 2);
    assert.match(malformed.stderr, /--agent-fingerprint: expected the SHA-256 fingerprint/);

    // Against the impostor with the agent's pin: refused before the key is written.
    const before = fake.connections();
    const impostorRun = await palisade([
      'agent',
      'health',
      '--agent-url',
      fake.url,
      '--agent-key',
      agent.key,
      '--agent-fingerprint',
      pin,
    ]);
    assert.equal(impostorRun.code, 6);
    assert.ok(fake.connections() > before);
    assert.deepEqual(fake.requests, []);
  });
});
