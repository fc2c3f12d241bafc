import assert from 'node:assert/strict';
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { generateToken } from '@palisade/protocol';
import type { LinkResponse } from '@palisade/protocol/link';
import { type WebSocket, WebSocketServer } from 'ws';
import { type AgentProcess, eventually, runCli, startAgent } from './agent-process.js';

/**
 * The agent's side of the outbound link against a stand-in console (a real HTTP and WebSocket
 * server on loopback): the link is opened with the daemon token, and every request frame is
 * answered by the agent's own API with its key check and whitelist, as a call on its port is.
 */
describe('the agent keeps an outbound link and serves it through its own API', () => {
  const token = generateToken('daemon');
  const seenAuth: string[] = [];
  let link: WebSocket | null = null;
  const consoleServer = http.createServer((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"data":{"interval_s":30,"jobs":[]}}');
  });
  const wss = new WebSocketServer({ noServer: true });
  consoleServer.on('upgrade', (req, socket, head) => {
    seenAuth.push(String(req.headers.authorization));
    if (req.url !== '/api/agent/link' || req.headers.authorization !== `Bearer ${token}`) {
      socket.end('HTTP/1.1 401 Unauthorized\r\ncontent-length: 0\r\nconnection: close\r\n\r\n');
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      link = ws;
    });
  });
  let agent: AgentProcess;
  let n = 0;

  /** One request frame down the link and the agent's response frame. */
  const ask = (frame: { method: string; path: string; query?: string; key: string; body?: unknown }) =>
    new Promise<LinkResponse & { json: unknown }>((resolve) => {
      const id = `t${++n}`;
      const ws = link!;
      const onMessage = (data: Buffer) => {
        const got = JSON.parse(data.toString()) as LinkResponse;
        if (got.type !== 'response' || got.id !== id) return;
        ws.off('message', onMessage);
        resolve({ ...got, json: JSON.parse(Buffer.from(got.body, 'base64').toString('utf8')) });
      };
      ws.on('message', onMessage);
      ws.send(
        JSON.stringify({
          type: 'request',
          id,
          method: frame.method,
          path: frame.path,
          query: frame.query ?? '',
          authorization: `Bearer ${frame.key}`,
          body: frame.body === undefined ? null : Buffer.from(JSON.stringify(frame.body)).toString('base64'),
        }),
      );
    });

  before(async () => {
    await new Promise<void>((resolve) => consoleServer.listen(0, '127.0.0.1', resolve));
    // A whitelist without loopback first: the console's address on the link must be refused.
    agent = await startAgent({ 'console.connect': 'outbound', 'metrics.whitelist': '192.0.2.1' });
    const consoleUrl = `http://127.0.0.1:${(consoleServer.address() as AddressInfo).port}`;
    const enrolled = await runCli(['enroll', '--console', consoleUrl, '--token', token, '--state-dir', agent.stateDir]);
    assert.equal(enrolled.code, 0, enrolled.out);
    await eventually('the agent opening its link', () => link ?? undefined);
  });

  after(async () => {
    await agent?.stop();
    wss.close();
    consoleServer.close();
  });

  test('the link is opened with the daemon token, and info shows it up', async () => {
    assert.deepEqual(seenAuth, [`Bearer ${token}`]);
    const info = await runCli(['info', '--state-dir', agent.stateDir, '--config', agent.configFile]);
    assert.match(info.stdout, /^console link: up since \S+ \(console.connect = outbound\)$/m);
  });

  test('a challenge is answered with the proof of the key (HMAC keyed by its SHA-256), never the key', async () => {
    const ws = link!;
    const nonce = randomBytes(32).toString('base64url');
    const proof = await new Promise<{ type: string; proof: string }>((resolve) => {
      const onMessage = (data: Buffer) => {
        const got = JSON.parse(data.toString()) as { type: string; proof: string };
        if (got.type !== 'proof') return;
        ws.off('message', onMessage);
        resolve(got);
      };
      ws.on('message', onMessage);
      ws.once('close', () => resolve({ type: 'closed', proof: '' }));
      ws.send(JSON.stringify({ type: 'challenge', nonce }));
    });
    const expected = createHmac('sha256', createHash('sha256').update(agent.key).digest())
      .update(`palisade-link-proof-v1:${nonce}`)
      .digest('hex');
    assert.equal(proof.proof, expected);
    assert.ok(!JSON.stringify(proof).includes('agk_'));
  });

  test('the whitelist applies to the console’s address on the link', async () => {
    const refused = await ask({ method: 'GET', path: '/metrics', key: agent.key });
    assert.equal(refused.status, 403);
    assert.deepEqual(refused.json, { error: 'address 127.0.0.1 is not in metrics.whitelist' });
  });

  test('with the whitelist lifted: the key decides, and control writes work', async () => {
    writeFileSync(
      agent.configFile,
      'metrics.listen = 127.0.0.1:0\nmetrics.collector_timeout_ms = 10000\nprotection.backend = monitor\nconsole.connect = outbound\n',
    );
    agent.child.kill('SIGHUP');
    await eventually('the reload', async () => {
      const r = await ask({ method: 'GET', path: '/health', key: agent.key });
      return r.status === 200 ? r : undefined;
    });

    const wrongKey = await ask({ method: 'GET', path: '/metrics', key: `agk_${'x'.repeat(40)}` });
    assert.equal(wrongKey.status, 401);
    assert.deepEqual(wrongKey.json, { error: 'invalid agent key' });

    const metrics = await ask({ method: 'GET', path: '/metrics', key: agent.key });
    assert.equal(metrics.status, 200);
    assert.match(metrics.content_type, /^application\/json/);

    const added = await ask({ method: 'POST', path: '/blacklist', key: agent.key, body: { ip: '203.0.113.50' } });
    assert.ok(added.status >= 200 && added.status < 300, JSON.stringify(added.json));
    const lookup = await ask({ method: 'GET', path: '/blacklist', query: 'ip=203.0.113.50', key: agent.key });
    assert.equal((lookup.json as { decided_by: string }).decided_by, 'blacklist');

    const unknown = await ask({ method: 'GET', path: '/nowhere', key: agent.key });
    assert.equal(unknown.status, 404);
  });
});
