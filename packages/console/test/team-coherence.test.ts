import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../src/config.js';
import { type DatabaseHandle, openDatabase } from '../src/db/database.js';
import { insertTeamMember } from '../src/repositories/team-members.repository.js';
import { type ConsoleProcess, startConsoleProcess } from './console-process.js';
import { processEnv } from './observability-support.js';

const redisUrl = process.env.PALISADE_TEST_REDIS_URL;
const pgUrl = process.env.PALISADE_TEST_DATABASE_URL;

/** Membership changes on three console processes sharing PostgreSQL and Redis (services/coherence/). */
describe('a member removed or given another role loses access at once on every console (PostgreSQL + Redis)', {
  skip: !(redisUrl && pgUrl) && 'needs PALISADE_TEST_DATABASE_URL and PALISADE_TEST_REDIS_URL',
}, () => {
  const { env: base, cleanup } = processEnv('postgres');
  const env = {
    ...base,
    PALISADE_REDIS_URL: redisUrl ?? '',
    PALISADE_REDIS_PREFIX: `palisade-teams-${process.pid}-${Date.now()}`,
    PALISADE_BOOTSTRAP_ADMIN: '0',
  };
  const consoles: ConsoleProcess[] = [];
  let database: DatabaseHandle;

  before(async () => {
    consoles.push(...(await Promise.all([0, 1, 2].map(() => startConsoleProcess(env)))));
    database = await openDatabase(loadConfig(env));
  });
  after(async () => {
    await Promise.all(consoles.map((c) => c.kill()));
    await database?.close();
    await cleanup();
  });

  async function call(
    i: number,
    method: string,
    path: string,
    options: { cookie?: string; token?: string; team?: number; body?: unknown } = {},
  ) {
    const res = await fetch(`${consoles[i]!.url}${path}`, {
      method,
      headers: {
        ...(options.cookie ? { cookie: options.cookie } : {}),
        ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
        ...(options.team ? { 'x-palisade-team': String(options.team) } : {}),
        ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
    });
    const text = await res.text();
    return { status: res.status, json: text ? JSON.parse(text) : {} };
  }

  async function register(i: number, email: string) {
    const res = await fetch(`${consoles[i]!.url}/api/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: 'three consoles', name: email }),
    });
    assert.equal(res.status, 201);
    const cookie = res.headers.get('set-cookie')!.split(';')[0]!;
    const me = await call(i, 'GET', '/api/account/me', { cookie });
    return { id: me.json.data.id as number, cookie };
  }

  test('role change and removal, each seen by all three consoles on the next request', async () => {
    const owner = await register(0, `owner-${process.pid}@example.com`);
    const member = await register(1, `member-${process.pid}@example.com`);
    const team = owner.id;
    await insertTeamMember(database.db, {
      account_id: team,
      person_id: member.id,
      role: 'operator',
      granted: '[]',
      revoked: '[]',
      created_at: Date.now(),
    });
    const newToken = async () => {
      const res = await call(1, 'POST', '/api/tokens', { cookie: member.cookie, team, body: { name: 'ops' } });
      assert.equal(res.status, 201, JSON.stringify(res.json));
      return res.json.data.token as string;
    };
    let token = await newToken();
    // Twice on each: the second answer comes from the console's memory.
    for (let i = 0; i < 6; i += 1) assert.equal((await call(i % 3, 'GET', '/api/v1/servers', { token })).status, 200);
    for (let i = 0; i < 3; i += 1)
      assert.equal((await call(i, 'GET', '/api/team/members', { cookie: member.cookie, team })).status, 200);

    const changed = await call(2, 'PATCH', `/api/team/members/${member.id}`, {
      cookie: owner.cookie,
      body: { role: 'viewer' },
    });
    assert.equal(changed.status, 200, JSON.stringify(changed.json));
    for (let i = 0; i < 3; i += 1) {
      assert.equal((await call(i, 'GET', '/api/v1/servers', { token })).status, 401, `console ${i}: token revoked`);
      const write = await call(i, 'POST', '/api/fleet/entries', {
        cookie: member.cookie,
        team,
        body: { list: 'black', ip: '198.51.100.8', scope: 'all' },
      });
      assert.equal(write.status, 403, `console ${i}: the viewer cannot write`);
      assert.equal(write.json.permission, 'control.edit');
    }

    token = await newToken();
    for (let i = 0; i < 6; i += 1) assert.equal((await call(i % 3, 'GET', '/api/v1/servers', { token })).status, 200);
    const removed = await call(0, 'DELETE', `/api/team/members/${member.id}`, { cookie: owner.cookie });
    assert.equal(removed.status, 200, JSON.stringify(removed.json));
    for (let i = 0; i < 3; i += 1) {
      assert.equal((await call(i, 'GET', '/api/v1/servers', { token })).status, 401, `console ${i}: token revoked`);
      const read = await call(i, 'GET', '/api/team/members', { cookie: member.cookie, team });
      assert.equal(read.status, 404, `console ${i}: no longer a member`);
    }
  });
});
