// What alert-rounds.test.ts and alert-outage.test.ts share: a database with an owner and one rule, many
// servers inserted at once, and what the lease and /readyz say of evaluation.

import assert from 'node:assert/strict';
import { generateToken, hashToken } from '@palisade/protocol';
import { eventually } from '@palisade/testkit';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import type { Database } from '../src/db/schema.js';
import { receiver, sample } from './alerts-support.js';
import type { ConsoleProcess } from './console-process.js';
import { get } from './observability-support.js';
import { type DialectName, registerUser, type TestDatabase, type TestUser, testDatabase } from './support.js';

/** Servers in the long rounds: enough that their first round takes a while (each one's alert is a transition). */
export const MANY = 3000;

export interface World {
  database: TestDatabase;
  env: Record<string, string>;
  app: FastifyInstance;
  owner: TestUser;
  ruleId: number;
  /** What the rule's Slack channel received. */
  hooks: Awaited<ReturnType<typeof receiver>>;
  close(): Promise<void>;
}

/** A migrated database with an owner and one rule of `kind`, and an in-process app (no periodic jobs) to set it up. */
export async function world(dialect: DialectName, rule: Record<string, unknown>): Promise<World> {
  const hooks = await receiver();
  const database = await testDatabase(dialect);
  const env: Record<string, string> = {
    PALISADE_DATA_DIR: database.dataDir,
    PALISADE_ALLOW_PRIVATE_TARGETS: '1',
    ...(database.databaseUrl
      ? { PALISADE_DATABASE_URL: database.databaseUrl, PALISADE_DATABASE_SCHEMA: database.databaseSchema! }
      : {}),
  };
  const app = await buildApp({ config: loadConfig(env), db: database.db });
  await app.services.catalog.seed();
  const owner = await registerUser(app);
  const channel = await app.inject({
    method: 'POST',
    url: '/api/alerts/channels',
    headers: { cookie: owner.cookie, 'content-type': 'application/json' },
    payload: JSON.stringify({ name: 'slack', kind: 'slack', url: `${hooks.base}/slack` }),
  });
  assert.equal(channel.statusCode, 201, channel.body);
  const res = await app.inject({
    method: 'POST',
    url: '/api/alerts/rules',
    headers: { cookie: owner.cookie, 'content-type': 'application/json' },
    payload: JSON.stringify({ channel_ids: [channel.json().data.channel.id], ...rule }),
  });
  assert.equal(res.statusCode, 201, res.body);
  return {
    database,
    env,
    app,
    owner,
    ruleId: res.json().data.rule.id,
    hooks,
    async close() {
      await app.close();
      await database.close();
      await hooks.close();
    },
  };
}

/** `count` servers of the owner, inserted at once, with these fields; their ids. */
export async function addServers(
  w: World,
  count: number,
  fields: { last_seen: number; agent_version?: string | null },
) {
  const product =
    (await w.app.services.catalog.products(w.owner.id))[0] ?? (await w.app.services.catalog.addProduct(w.owner.id, 3));
  const ids: number[] = [];
  for (let start = 0; start < count; start += 400) {
    const rows = await w.database.db
      .insertInto('servers')
      .values(
        Array.from({ length: Math.min(400, count - start) }, (_, i) => ({
          account_id: w.owner.id,
          product_id: product.id,
          name: `srv-${start + i}`,
          api_url: 'http://10.0.0.5:9100',
          api_key_enc: 'not-a-real-key',
          hostname: null,
          public_ip: null,
          facts: JSON.stringify({ os: 'Debian 12', cores: 2 }),
          agent_version: fields.agent_version ?? null,
          daemon_token_hash: null,
          last_seen: fields.last_seen,
          latest_sample: null,
          score_base: null,
          score_base_total: null,
          created_at: fields.last_seen,
        })),
      )
      .returning('id')
      .execute();
    ids.push(...rows.map((r) => Number(r.id)));
  }
  return ids;
}

export const firing = async (db: Database, ruleId: number) =>
  Number(
    (
      await db
        .selectFrom('alert_states')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('rule_id', '=', ruleId)
        .where('firing', '=', 1)
        .executeTakeFirstOrThrow()
    ).n,
  );

export const evaluationLease = (db: Database) =>
  db.selectFrom('job_leases').selectAll().where('name', '=', 'alert-evaluation').executeTakeFirst();

/** Waits until some console holds the evaluation lease: a round is running. */
export const roundRunning = (w: World) =>
  eventually('an evaluation round running', async () => (await evaluationLease(w.database.db)) ?? undefined, 40_000);

/** What /readyz says of alert evaluation. */
export async function evaluationOf(p: ConsoleProcess) {
  const ready = await get(`${p.url}/readyz`);
  assert.equal(ready.status, 200, ready.body);
  return (JSON.parse(ready.body) as { alerts?: { last_round_at: string | null; late: boolean | null } }).alerts;
}

/**
 * After `restartedAt`, the rule fires on all `count` servers (what the killed round left undone is
 * done) and a round finishes — both within 20 s.
 */
export async function evaluatesAgain(w: World, p: ConsoleProcess, restartedAt: number, count: number) {
  await eventually(
    'a round after the restart, every alert firing',
    async () => {
      if ((await firing(w.database.db, w.ruleId)) !== count) return undefined;
      const last = (await evaluationOf(p))?.last_round_at;
      return last && Date.parse(last) >= restartedAt ? true : undefined;
    },
    25_000,
  );
  const took = Date.now() - restartedAt;
  assert.ok(took <= 20_000, `the restarted console evaluated after ${took} ms`);
}

/**
 * The agent that was away comes back within its interval, after the console has judged the fleet
 * in two rounds of its grace (counted on /readyz, so a slow machine cannot make the check trivial).
 */
export async function comesBackAfterTwoRounds(p: ConsoleProcess, daemon: string) {
  const seen = new Set<string>();
  const first = (await evaluationOf(p))?.last_round_at;
  if (first) seen.add(first);
  await eventually('two rounds in the grace', async () => {
    const last = (await evaluationOf(p))?.last_round_at;
    if (last) seen.add(last);
    return seen.size >= (first ? 3 : 2) ? true : undefined;
  });
  const res = await fetch(`${p.url}/api/agent/checkin`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${daemon}` },
    body: JSON.stringify({
      agent_version: '0.1.0',
      hostname: 'comes-back',
      facts: { os: 'Debian GNU/Linux 12', cores: 2 },
      sample: sample(Date.now()),
    }),
  });
  assert.equal(res.status, 200, await res.text());
}

export const outdated = { name: 'old agents', kind: 'agent_outdated' };

/**
 * Two servers of the owner, last seen at `lastSeen`: "comes-back", whose daemon token (answered) the
 * test checks in with, and "stays-silent".
 */
export async function backAndSilent(w: World, lastSeen: number): Promise<string> {
  const [back, silent] = await addServers(w, 2, { last_seen: lastSeen });
  const daemon = generateToken('daemon');
  await w.database.db
    .updateTable('servers')
    .set({ daemon_token_hash: hashToken(daemon), name: 'comes-back' })
    .where('id', '=', back!)
    .execute();
  await w.database.db.updateTable('servers').set({ name: 'stays-silent' }).where('id', '=', silent!).execute();
  return daemon;
}

/** Waits for the silent server's offline alert and holds that nothing was said of the one that came back; the texts sent. */
export async function onlySilentAlerted(w: World): Promise<string[]> {
  await eventually(
    'the silent server alerted',
    () => (w.hooks.got.some((r) => /stays-silent is offline/.test(r.body)) ? true : undefined),
    40_000,
  );
  const texts = w.hooks.got.map((r) => JSON.parse(r.body).text as string);
  assert.deepEqual(
    texts.filter((t) => /comes-back/.test(t)),
    [],
    'nothing about the agent that came back within its interval',
  );
  return texts;
}
