import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertMatchesOpenApi } from '@palisade/console/openapi-check';
import {
  type AgentProcess,
  type ConsoleProcess,
  signUp,
  startAgent,
  startConsoleProcess,
  tempDir,
} from './support/processes.js';

/**
 * The audit log with a real console and a real agent (docs/protection.md, "Audit log"): every write
 * through the control proxy is recorded with who, from where, what changed and what the agent
 * answered — done, refused by the agent, or not delivered — and reads are not.
 */
describe('audit log end to end', () => {
  const dir = tempDir('palisade-audit-');
  let consoleProc: ConsoleProcess;
  let agent: AgentProcess;
  let owner = '';
  let stranger = '';
  let serverId = 0;

  async function call(method: string, path: string, cookie: string, body?: unknown) {
    const res = await fetch(`${consoleProc.url}${path}`, {
      method,
      headers: { cookie, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    if (path.startsWith('/api/audit')) assertMatchesOpenApi(path.split('?')[0]!, res.status, JSON.parse(text), method);
    // biome-ignore lint/suspicious/noExplicitAny: answers are checked field by field
    return { status: res.status, body: text ? (JSON.parse(text) as any) : null };
  }

  before(async () => {
    consoleProc = await startConsoleProcess({
      PALISADE_DATA_DIR: dir.path,
      PALISADE_ALLOW_PRIVATE_TARGETS: '1',
      PALISADE_BOOTSTRAP_ADMIN: '0',
    });
    agent = await startAgent();
    owner = await signUp(consoleProc.url, {
      email: `audit-owner-${process.pid}@example.com`,
      password: 'audit-password',
      name: `audit-owner-${process.pid}@example.com`,
    });
    stranger = await signUp(consoleProc.url, {
      email: `audit-stranger-${process.pid}@example.com`,
      password: 'audit-password',
      name: `audit-stranger-${process.pid}@example.com`,
    });
    const product = (await call('POST', '/api/products', owner, { catalog_id: 1 })).body.data.product;
    const added = await call('POST', '/api/servers', owner, {
      product_id: product.id,
      name: 'audited-1',
      api_url: agent.url,
      api_key: agent.key,
    });
    assert.equal(added.status, 201, JSON.stringify(added.body));
    serverId = added.body.data.server.id;
  });

  after(async () => {
    await agent?.stop();
    await consoleProc?.kill();
    dir.remove();
  });

  test('writes are logged with their outcome; reads are not; nobody else sees them', async () => {
    const control = (method: string, path: string, body?: unknown) =>
      call(method, `/api/servers/${serverId}/control?path=${path}`, owner, body);
    assert.equal((await control('GET', 'blacklist')).status, 200);
    assert.equal((await control('POST', 'blacklist', { ip: '203.0.113.9', note: 'scanner' })).status, 200);
    const refused = await control('POST', 'blacklist', { ip: 'not-an-address' });
    assert.equal(refused.status, 400);
    assert.equal(
      (await call('DELETE', `/api/servers/${serverId}/control?path=blacklist&ip=203.0.113.9`, owner)).status,
      200,
    );

    const log = (await call('GET', '/api/audit', owner)).body.data;
    assert.equal(log.total, 3, 'three writes; the read is not logged');
    const [removed, bad, added] = log.entries;
    assert.equal(added.action, 'control.write');
    assert.equal(added.actor_kind, 'session');
    assert.equal(added.actor, `audit-owner-${process.pid}@example.com`);
    assert.equal(added.ip, '127.0.0.1');
    assert.equal(added.server_id, serverId);
    assert.equal(added.server_name, 'audited-1');
    assert.deepEqual([added.method, added.path], ['POST', 'blacklist']);
    assert.equal(added.summary, '{"ip":"203.0.113.9","note":"scanner"}');
    assert.deepEqual([added.status, added.outcome], [200, 'done']);
    assert.equal(bad.status, 400);
    assert.match(bad.outcome, /^refused by the agent: ip: /);
    assert.deepEqual([removed.method, removed.summary, removed.status], ['DELETE', 'ip=203.0.113.9', 200]);
    assert.ok(added.id < bad.id && bad.id < removed.id, 'newest first');

    const theirs = (await call('GET', '/api/audit', stranger)).body.data;
    assert.deepEqual([theirs.total, theirs.entries.length], [0, 0]);
    assert.equal(
      (await call('POST', `/api/servers/${serverId}/control?path=blacklist`, stranger, { ip: '198.51.100.1' })).status,
      404,
    );
    assert.equal((await call('GET', '/api/audit', owner)).body.data.total, 3, "a stranger's try is not filed here");
    const own = (await call('GET', '/api/audit', stranger)).body.data.entries;
    assert.deepEqual(
      own.map((e: { server_id: number | null; server_name: string | null; status: number }) => [
        e.server_id,
        e.server_name,
        e.status,
      ]),
      [[null, null, 404]],
      'it is in the stranger’s own log, naming no server',
    );
  });

  test('pages walk back with a cursor; bad paging is a 400 naming the field', async () => {
    const first = (await call('GET', '/api/audit?limit=2', owner)).body.data;
    assert.equal(first.entries.length, 2);
    assert.ok(first.next_cursor);
    const second = (await call('GET', `/api/audit?limit=2&cursor=${first.next_cursor}`, owner)).body.data;
    assert.equal(second.next_cursor, null);
    const ids = [...first.entries, ...second.entries].map((e: { id: number }) => e.id);
    assert.equal(new Set(ids).size, ids.length, 'no entry twice');
    assert.equal(ids.length, first.total);
    const badLimit = await call('GET', '/api/audit?limit=500', owner);
    assert.equal(badLimit.status, 400);
    assert.match(badLimit.body.error, /^limit: expected an integer from 1 to 200/);
    const badCursor = await call('GET', '/api/audit?cursor=abc', owner);
    assert.equal(badCursor.status, 400);
    assert.match(badCursor.body.error, /^cursor: /);
  });

  test('a write the agent never got is logged as not delivered', async () => {
    await agent.stop();
    const res = await call('POST', `/api/servers/${serverId}/control?path=whitelist`, owner, { ip: '192.0.2.1' });
    assert.equal(res.status, 502);
    const [latest] = (await call('GET', '/api/audit?limit=1', owner)).body.data.entries;
    assert.deepEqual([latest.path, latest.status, latest.outcome], ['whitelist', 502, 'agent unreachable']);
  });
});
