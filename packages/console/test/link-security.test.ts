import assert from 'node:assert/strict';
import { createHash, createHmac } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { generateToken } from '@palisade/protocol';
import {
  LINK_MAX_HEARTBEATS_PER_MINUTE,
  LINK_PATH,
  LINK_REFUSED_CODE,
  type LinkRequest,
} from '@palisade/protocol/link';
import { WebSocket } from 'ws';
import { LIMITS } from '../src/plugins/rate-limits.js';
import { type ConsoleProcess, runConsoleCli, startConsoleProcess } from './console-process.js';
import { dialects, dropSchema } from './support.js';

/**
 * Issue 26, items 3, 6, 13, 14 and 16 against a real console process (docs/security.md, "Links and
 * agent keys"): what one daemon token and one account without `control.edit` can and cannot do.
 */

/** A loopback HTTP listener that counts every request; it answers as an agent would (`/health` ok, anything else forged). */
async function listener() {
  const seen: { url: string; authorization: string | undefined }[] = [];
  const server = http.createServer((req, res) => {
    seen.push({ url: req.url ?? '', authorization: req.headers.authorization });
    req.resume();
    const body = req.url === '/health' ? '{"status":"ok","version":"0.1.0"}' : '{"forged":true}';
    res.writeHead(200, { 'content-type': 'application/json' }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    seen,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}

/** The proof a link must give (docs/agent.md, "Outbound link"), computed here independently of the code under test. */
const proofFor = (agentKey: string, nonce: string) =>
  createHmac('sha256', createHash('sha256').update(agentKey).digest())
    .update(`palisade-link-proof-v1:${nonce}`)
    .digest('hex');

/** A raw WebSocket client on the link (not the agent): every frame it got, and whether and how it was closed. */
interface RawLink {
  ws: WebSocket;
  frames: string[];
  closed: Promise<{ code: number; reason: string }>;
  isClosed(): boolean;
  /** Resolves once the console read everything sent before it (a ping answered), or false when it closed the link first. */
  flushed(): Promise<boolean>;
  /** The next frame that arrives (or the first not yet taken). */
  next(): Promise<string>;
}

type Opened = { open: RawLink } | { status: number; body: { error: string } };

function rawLink(url: string, token: string, localAddress = '127.0.0.1'): Promise<Opened> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers: { authorization: `Bearer ${token}` }, localAddress });
    const frames: string[] = [];
    let taken = 0;
    const waiters: ((text: string) => void)[] = [];
    let closedFlag = false;
    const closed = new Promise<{ code: number; reason: string }>((r) =>
      ws.on('close', (code, reason) => {
        closedFlag = true;
        r({ code, reason: reason.toString() });
      }),
    );
    ws.on('message', (data) => {
      frames.push(data.toString());
      const w = waiters.shift();
      if (w) w(frames[taken++]!);
    });
    ws.once('unexpected-response', (_req, res) => {
      let text = '';
      res.on('data', (c: Buffer) => {
        text += c.toString();
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
    });
    ws.once('error', (err) => {
      if (ws.readyState === WebSocket.CONNECTING) reject(err);
    });
    ws.once('open', () =>
      resolve({
        open: {
          ws,
          frames,
          closed,
          isClosed: () => closedFlag,
          flushed: () =>
            new Promise<boolean>((r) => {
              if (closedFlag) return r(false);
              ws.once('pong', () => r(true));
              void closed.then(() => r(false));
              ws.ping();
            }),
          next: () =>
            new Promise<string>((r) => {
              if (taken < frames.length) r(frames[taken++]!);
              else waiters.push(r);
            }),
        },
      }),
    );
  });
}

/** Opens a link and proves it with `agentKey`; answers every request frame with `answer`. */
async function provenLink(url: string, token: string, agentKey: string, answer = '{"status":"ok","version":"9.9.9"}') {
  const opened = await rawLink(url, token);
  assert.ok('open' in opened, JSON.stringify(opened));
  const link = opened.open;
  const first = JSON.parse(await link.next()) as { type: string; nonce: string };
  link.ws.on('message', (data) => {
    const frame = JSON.parse(data.toString()) as LinkRequest;
    if (frame.type !== 'request') return;
    link.ws.send(
      JSON.stringify({
        type: 'response',
        id: frame.id,
        status: 200,
        content_type: 'application/json',
        body: Buffer.from(answer).toString('base64'),
      }),
    );
  });
  // (Without a challenge, as older agents do, the first frame is already a call: it is answered like the rest.)
  if (first.type === 'challenge')
    link.ws.send(JSON.stringify({ type: 'proof', proof: proofFor(agentKey, first.nonce) }));
  else link.ws.emit('message', Buffer.from(JSON.stringify(first)), false);
  return link;
}

for (const dialect of dialects()) {
  describe(`links and agent keys against a console process (${dialect})`, () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'palisade-link-sec-'));
    const schema = `t_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
    const env: Record<string, string> = {
      PALISADE_DATA_DIR: dataDir,
      PALISADE_ALLOW_PRIVATE_TARGETS: '1',
      PALISADE_BOOTSTRAP_ADMIN: '0',
      ...(dialect === 'postgres'
        ? { PALISADE_DATABASE_URL: process.env.PALISADE_TEST_DATABASE_URL!, PALISADE_DATABASE_SCHEMA: schema }
        : {}),
    };
    let proc: ConsoleProcess;
    let cookie = '';
    let productId = 0;
    let linkUrl = '';

    const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
      const res = await fetch(`${proc.url}${path}`, {
        method,
        headers: { cookie, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      const text = await res.text();
      // biome-ignore lint/suspicious/noExplicitAny: answers are checked field by field
      let json: any = null;
      try {
        json = JSON.parse(text);
      } catch {
        json = { text };
      }
      return { status: res.status, body: json };
    };

    /** A server registered by an agent with an enrolment token, as the one-line install does. */
    async function registered(connect: 'outbound' | 'direct', port: number, name: string) {
      const made = await call('POST', '/api/enrolment-tokens', { product_id: productId });
      assert.equal(made.status, 201, JSON.stringify(made.body));
      const agentKey = generateToken('agentKey');
      const res = await call(
        'POST',
        '/api/agent/register',
        { name, api_key: agentKey, api_url: null, port, tls: false, tls_fingerprint: null, version: '0.1.0', connect },
        { authorization: `Bearer ${made.body.data.token}`, cookie: '' },
      );
      assert.equal(res.status, 201, JSON.stringify(res.body));
      return { id: res.body.data.server_id as number, daemon: res.body.data.daemon_token as string, agentKey };
    }
    const connection = async (id: number) => (await call('GET', `/api/servers/${id}`)).body.data.server.connection;

    before(async () => {
      proc = await startConsoleProcess(env);
      linkUrl = `${proc.url.replace(/^http/, 'ws')}${LINK_PATH}`;
      const email = `links-${process.pid}-${dialect}@example.com`;
      const reg = await fetch(`${proc.url}/api/auth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email, password: 'test-password-123', name: 'links' }),
      });
      assert.equal(reg.status, 201, await reg.text());
      cookie = reg.headers.get('set-cookie')!.split(';')[0]!;
      const product = await call('POST', '/api/products', { catalog_id: 3 });
      assert.equal(product.status, 201, JSON.stringify(product.body));
      productId = product.body.data.product.id;
    });
    after(async () => {
      await proc?.kill();
      if (dialect === 'postgres') await dropSchema(process.env.PALISADE_TEST_DATABASE_URL!, schema);
      rmSync(dataDir, { recursive: true, force: true });
    });

    test('item 3: an outbound server with its link down is 502 agent unreachable; the registration address gets nothing', async () => {
      // The listener sits where the console would fall back to: the address the registration came from.
      const nat = await listener();
      try {
        const server = await registered('outbound', nat.port, 'behind-nat');
        const metrics = await call('GET', `/api/servers/${server.id}/metrics`);
        assert.equal(metrics.status, 502, JSON.stringify(metrics.body));
        assert.equal(metrics.body.error, 'agent unreachable');
        const write = await call('POST', `/api/servers/${server.id}/control?path=blacklist`, { ip: '203.0.113.7' });
        assert.equal(write.status, 502, JSON.stringify(write.body));
        const check = await call('POST', '/api/servers/test', { server_id: server.id });
        assert.equal(check.body.data.reachable, false);
        assert.deepEqual(nat.seen, [], 'no request (and no agent key) went to the registration address');
        assert.deepEqual(await connection(server.id), { mode: 'outbound', link: 'down', since: null });
      } finally {
        await nat.close();
      }
    });

    test('item 6a: without control.edit, no new daemon token (403 naming the permission); with it, one', async () => {
      const server = await registered('outbound', 9, 'enrol-again');
      const revoked = await runConsoleCli(env, [
        'admin',
        'revoke',
        `links-${process.pid}-${dialect}@example.com`,
        'control.edit',
      ]);
      assert.equal(revoked.code, 0, revoked.out);
      try {
        const refused = await call('POST', `/api/servers/${server.id}/enrollment`);
        assert.equal(refused.status, 403, JSON.stringify(refused.body));
        assert.match(refused.body.error, /control\.edit/);
        const switched = await call('PUT', `/api/servers/${server.id}/connection`, { mode: 'direct' });
        assert.equal(switched.status, 403, 'switching the connection needs control.edit too');
        // Nothing half-done: the old daemon token still opens the link.
        const still = await rawLink(linkUrl, server.daemon);
        assert.ok('open' in still, JSON.stringify(still));
        still.open.ws.terminate();
      } finally {
        const granted = await runConsoleCli(env, [
          'admin',
          'grant',
          `links-${process.pid}-${dialect}@example.com`,
          'control.edit',
        ]);
        assert.equal(granted.code, 0, granted.out);
      }
      const issued = await call('POST', `/api/servers/${server.id}/enrollment`);
      assert.equal(issued.status, 200, JSON.stringify(issued.body));
      assert.match(issued.body.data.token, /^dmn_/);
    });

    test('item 6b: a link opened with a daemon token alone never receives the agent key; a wrong proof closes it', async () => {
      const server = await registered('outbound', 9, 'forged-link');
      const opened = await rawLink(linkUrl, server.daemon);
      assert.ok('open' in opened, JSON.stringify(opened));
      const link = opened.open;
      const first = JSON.parse(await link.next()) as { type: string; nonce: string };
      assert.equal(first.type, 'challenge', `the first frame is a challenge, not a call: ${JSON.stringify(first)}`);
      link.ws.send(JSON.stringify({ type: 'proof', proof: proofFor(generateToken('agentKey'), first.nonce) }));
      const closed = await link.closed;
      assert.equal(closed.code, LINK_REFUSED_CODE);
      assert.match(closed.reason, /proof of the agent key/);
      assert.ok(!link.frames.join('\n').includes('agk_'), 'no frame carried an agent key');
      assert.equal(link.frames.length, 1, 'only the challenge');
      assert.equal((await connection(server.id)).link, 'down');
      assert.ok(await proc.waitFor(/failed the proof of the agent key/), 'the refusal is logged');

      // Proved with the real key: the console's calls go down it.
      const proven = await provenLink(linkUrl, server.daemon, server.agentKey);
      const up = await call('POST', '/api/servers/test', { server_id: server.id });
      assert.equal(up.body.data.agent_version, '9.9.9', JSON.stringify(up.body));
      assert.equal((await connection(server.id)).link, 'up');
      proven.ws.terminate();
    });

    test('item 6c: a forged link does not make a direct server outbound; only its account switches it, audited', async () => {
      const agent = await listener();
      try {
        const server = await registered('direct', agent.port, 'stays-direct');
        const forged = await rawLink(linkUrl, server.daemon);
        assert.ok(!('open' in forged), 'no link for a direct server');
        assert.equal(forged.status, 409);
        assert.match(forged.body.error, /^connect: /);
        assert.deepEqual(await connection(server.id), { mode: 'direct', link: null, since: null });
        const bad = await call('PUT', `/api/servers/${server.id}/connection`, { mode: 'sideways' });
        assert.equal(bad.status, 400);
        assert.match(bad.body.error, /mode/);

        const switched = await call('PUT', `/api/servers/${server.id}/connection`, { mode: 'outbound' });
        assert.equal(switched.status, 200, JSON.stringify(switched.body));
        assert.equal(switched.body.data.server.connection.mode, 'outbound');
        const audit = await call('GET', '/api/audit');
        const entry = audit.body.data.entries.find((e: { action: string }) => e.action === 'server.connection');
        assert.ok(entry, JSON.stringify(audit.body));
        assert.equal(entry.server_id, server.id);
        assert.equal(entry.summary, 'mode: direct → outbound');
        const now = await provenLink(linkUrl, server.daemon, server.agentKey);
        now.ws.terminate();
      } finally {
        await agent.close();
      }
    });

    test('item 13: refused tokens from one address never lock out a valid one from it; they are still limited', async () => {
      const server = await registered('outbound', 9, 'behind-the-same-nat');
      const from = '127.0.0.13';
      const { points } = LIMITS.link;
      for (let sent = 0; sent < points; sent += 50) {
        const batch = await Promise.all(
          Array.from({ length: Math.min(50, points - sent) }, () => rawLink(linkUrl, 'dmn_not-a-token', from)),
        );
        assert.ok(batch.every((a) => !('open' in a) && a.status === 401));
      }
      const limited = await rawLink(linkUrl, 'dmn_not-a-token', from);
      assert.ok(!('open' in limited));
      assert.equal(limited.status, 429);
      assert.match(limited.body.error, /^too many link upgrades with a refused token from this address/);
      const valid = await rawLink(linkUrl, server.daemon, from);
      assert.ok('open' in valid, `a valid token from the same address: ${JSON.stringify(valid)}`);
      valid.open.ws.terminate();
    });

    test('item 14: unsolicited frames close the link, counted; other requests keep working', async () => {
      const server = await registered('outbound', 9, 'taken-over');
      // A large answer nobody asked for: refused unread, the link closed at the first.
      const first = await provenLink(linkUrl, server.daemon, server.agentKey);
      assert.equal(await first.flushed(), true, 'the proof accepted');
      const big = Buffer.alloc(3 * 1024 * 1024, 'a').toString('base64');
      let accepted = 0;
      for (let i = 0; i < 5; i += 1) {
        if (first.isClosed()) break;
        first.ws.send(
          JSON.stringify({ type: 'response', id: `nobody${i}`, status: 200, content_type: 'x', body: big }),
        );
        if (await first.flushed()) accepted += 1;
      }
      assert.equal(accepted, 0, 'no unsolicited answer was accepted');
      assert.equal((await first.closed).code, LINK_REFUSED_CODE);

      // Heartbeats beyond the bound close the link: exactly the bound is accepted.
      const second = await provenLink(linkUrl, server.daemon, server.agentKey);
      assert.equal(await second.flushed(), true);
      let beats = 0;
      for (let i = 0; i < LINK_MAX_HEARTBEATS_PER_MINUTE + 5; i += 1) {
        if (second.isClosed()) break;
        second.ws.send(JSON.stringify({ type: 'heartbeat', ts: i }));
        if (await second.flushed()) beats += 1;
      }
      assert.equal(beats, LINK_MAX_HEARTBEATS_PER_MINUTE);
      assert.equal((await second.closed).code, LINK_REFUSED_CODE);

      // A padded heartbeat (4 MB of unknown fields) is refused unread too.
      const third = await provenLink(linkUrl, server.daemon, server.agentKey);
      assert.equal(await third.flushed(), true);
      third.ws.send(JSON.stringify({ type: 'heartbeat', ts: 1, pad: 'x'.repeat(4 * 1024 * 1024) }));
      assert.equal(await third.flushed(), false, 'closed');
      assert.equal((await third.closed).code, LINK_REFUSED_CODE);

      const list = await call('GET', '/api/servers');
      assert.equal(list.status, 200);
      const fourth = await provenLink(linkUrl, server.daemon, server.agentKey, '{"cpu":{"pct":1}}');
      const metrics = await call('GET', `/api/servers/${server.id}/metrics`);
      assert.equal(metrics.status, 200, JSON.stringify(metrics.body));
      assert.deepEqual(metrics.body, { cpu: { pct: 1 } });
      fourth.ws.terminate();
    });

    test('item 16: GET /api/agent/link without Upgrade is a 400 naming the header, as docs/api.md says', async () => {
      const res = await call('GET', LINK_PATH);
      assert.equal(res.status, 400, JSON.stringify(res.body));
      assert.match(res.body.error, /^upgrade: expected Upgrade: websocket/);
    });
  });
}
