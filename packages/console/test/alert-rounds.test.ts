// Alert evaluation across console restarts, stops and deaths (docs/alerts.md, "Timing" and "After a
// restart or an outage"): real console processes on one database, killed or stopped mid-round.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { generateToken, hashToken } from '@palisade/protocol';
import { eventually } from '@palisade/testkit';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import type { Database } from '../src/db/schema.js';
import { receiver, sample } from './alerts-support.js';
import { type ConsoleProcess, startConsoleProcess } from './console-process.js';
import { get, parseMetrics } from './observability-support.js';
import {
  type DialectName,
  dialects,
  registerUser,
  type TestDatabase,
  type TestUser,
  testApp,
  testDatabase,
} from './support.js';

/** Servers in the long rounds: enough that their first round takes a while (each one's alert is a transition). */
const MANY = 3000;

interface World {
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
async function world(dialect: DialectName, rule: Record<string, unknown>): Promise<World> {
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
async function addServers(w: World, count: number, fields: { last_seen: number; agent_version?: string | null }) {
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

const firing = async (db: Database, ruleId: number) =>
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

const evaluationLease = (db: Database) =>
  db.selectFrom('job_leases').selectAll().where('name', '=', 'alert-evaluation').executeTakeFirst();

/** Waits until some console holds the evaluation lease: a round is running. */
const roundRunning = (w: World) =>
  eventually('an evaluation round running', async () => (await evaluationLease(w.database.db)) ?? undefined, 40_000);

/** What /readyz says of alert evaluation. */
async function evaluationOf(p: ConsoleProcess) {
  const ready = await get(`${p.url}/readyz`);
  assert.equal(ready.status, 200, ready.body);
  return (JSON.parse(ready.body) as { alerts?: { last_round_at: string | null; late: boolean | null } }).alerts;
}

/**
 * After `restartedAt`, the rule fires on all `count` servers (what the killed round left undone is
 * done) and a round finishes — both within 20 s.
 */
async function evaluatesAgain(w: World, p: ConsoleProcess, restartedAt: number, count: number) {
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
async function comesBackAfterTwoRounds(p: ConsoleProcess, daemon: string) {
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

const outdated = { name: 'old agents', kind: 'agent_outdated' };

for (const dialect of dialects()) {
  describe(`alert evaluation after a console stops mid-round (${dialect})`, () => {
    test('killed (SIGKILL) mid-round and restarted: evaluates within 20 s', async () => {
      const w = await world(dialect, outdated);
      try {
        await addServers(w, MANY, { last_seen: Date.now(), agent_version: '0.0.1' });
        const first = await startConsoleProcess(w.env);
        await roundRunning(w);
        await first.kill('SIGKILL');
        const lease = await evaluationLease(w.database.db);
        assert.ok(lease && Number(lease.expires_at) > Date.now(), 'the kill landed mid-round: the lease is held');
        const restartedAt = Date.now();
        const second = await startConsoleProcess(w.env);
        try {
          await evaluatesAgain(w, second, restartedAt, MANY);
        } finally {
          await second.kill('SIGTERM');
        }
      } finally {
        await w.close();
      }
    });

    test('stopped (SIGTERM) mid-round: the round ends before the database closes, the restart evaluates within 20 s', async () => {
      const w = await world(dialect, outdated);
      try {
        await addServers(w, MANY, { last_seen: Date.now(), agent_version: '0.0.1' });
        const first = await startConsoleProcess(w.env);
        await roundRunning(w);
        assert.equal(await first.kill('SIGTERM'), 0, first.output());
        assert.doesNotMatch(first.output(), /alert-evaluation failed|driver has already been destroyed/);
        assert.equal(await evaluationLease(w.database.db), undefined, 'the stopped console freed its lease');
        const restartedAt = Date.now();
        const second = await startConsoleProcess(w.env);
        try {
          await evaluatesAgain(w, second, restartedAt, MANY);
        } finally {
          await second.kill('SIGTERM');
        }
      } finally {
        await w.close();
      }
    });

    test('two consoles: the lease holder killed mid-round, the survivor evaluates within 20 s', async () => {
      const w = await world(dialect, outdated);
      try {
        await addServers(w, MANY, { last_seen: Date.now(), agent_version: '0.0.1' });
        const consoles = [await startConsoleProcess(w.env), await startConsoleProcess(w.env)];
        try {
          const lease = await roundRunning(w);
          const holder = consoles.find((c) => lease.holder.includes(`:${c.child.pid}:`));
          assert.ok(holder, `a console holds the lease: ${lease.holder}`);
          await holder.kill('SIGKILL');
          const killedAt = Date.now();
          assert.ok(await evaluationLease(w.database.db), 'the kill landed mid-round: the lease is held');
          const survivor = consoles.find((c) => c !== holder)!;
          await evaluatesAgain(w, survivor, killedAt, MANY);
        } finally {
          for (const c of consoles) await c.kill('SIGTERM');
        }
      } finally {
        await w.close();
      }
    });
  });

  test(`late evaluation is shown on /readyz, /metrics, the dashboard's API and in the log, and clears (${dialect})`, async () => {
    const w = await world(dialect, outdated);
    try {
      // The last round finished 10 min ago, and a process that never ends its round holds the lease.
      const now = Date.now();
      await w.database.db
        .insertInto('job_rounds')
        .values({ name: 'alert-evaluation', holder: 'gone', started_at: now - 600_000, finished_at: now - 600_000 })
        .execute();
      await w.database.db
        .insertInto('job_leases')
        .values({ name: 'alert-evaluation', holder: 'stuck', expires_at: now + 3_600_000 })
        .execute();
      const p = await startConsoleProcess({
        ...w.env,
        PALISADE_ALERT_INTERVAL_S: '1',
        PALISADE_METRICS_ADDR: '127.0.0.1:0',
      });
      try {
        await p.waitFor(/alert evaluation is late: the last round finished 6\d\d s ago/);
        const ready = await evaluationOf(p);
        assert.equal(ready?.late, true);
        assert.equal(ready?.last_round_at, new Date(now - 600_000).toISOString());
        const metricsUrl = /Metrics for Prometheus on (http:\/\/\S+)/.exec(p.output())![1]!;
        const metrics = parseMetrics((await get(metricsUrl)).body);
        assert.equal(metrics.get('palisade_alert_evaluation_late'), 1);
        assert.equal(metrics.get('palisade_alert_last_round_timestamp_seconds'), (now - 600_000) / 1000);
        assert.ok(metrics.get('palisade_alert_last_round_age_seconds')! >= 600);
        const api = async () => {
          const res = await fetch(`${p.url}/api/alerts/evaluation`, { headers: { cookie: w.owner.cookie } });
          assert.equal(res.status, 200);
          return ((await res.json()) as { data: { last_round_at: number | null; late: boolean; interval_s: number } })
            .data;
        };
        const late = await api();
        assert.equal(late.late, true);
        assert.equal(late.last_round_at, now - 600_000);
        assert.equal(late.interval_s, 1);
        // The stuck holder's lease goes: a round runs and evaluation is on time again.
        await w.database.db.deleteFrom('job_leases').where('holder', '=', 'stuck').execute();
        await p.waitFor(/alert evaluation is on time again/);
        const after = await api();
        assert.equal(after.late, false);
        assert.ok(after.last_round_at! > now, 'a new round finished');
        assert.equal((await evaluationOf(p))?.late, false);
      } finally {
        await p.kill('SIGTERM');
      }
    } finally {
      await w.close();
    }
  });

  test(`GET /api/alerts/evaluation answers as documented, and only to a session (${dialect})`, async () => {
    const t = await testApp(dialect);
    try {
      const owner = await registerUser(t.app);
      assert.equal((await t.app.inject({ method: 'GET', url: '/api/alerts/evaluation' })).statusCode, 401);
      const ask = async () => {
        const res = await t.app.inject({
          method: 'GET',
          url: '/api/alerts/evaluation',
          headers: { cookie: owner.cookie },
        });
        assert.equal(res.statusCode, 200, res.body);
        return res.json().data;
      };
      // No round yet, and the console has just started: not late.
      assert.deepEqual(await ask(), { last_round_at: null, interval_s: 15, late: false, as_of: t.clock.now });
      await t.app.services.housekeeping.recordRound('alert-evaluation', {
        holder: 'test',
        started_at: t.clock.now - 1000,
        finished_at: t.clock.now,
      });
      t.clock.advance(45_001);
      assert.deepEqual(await ask(), {
        last_round_at: t.clock.now - 45_001,
        interval_s: 15,
        late: true,
        as_of: t.clock.now,
      });
    } finally {
      await t.close();
    }
  });

  describe(`after a console outage of 300 s (${dialect})`, () => {
    let w: World;
    before(async () => {
      w = await world(dialect, { name: 'down', kind: 'offline' });
    });
    after(() => w.close());

    test('no offline alert for an agent that checks in within one interval; one that stays silent is alerted after the grace', async () => {
      // The console was down for 300 s: both agents last checked in before it went away.
      const [back, silent] = await addServers(w, 2, { last_seen: Date.now() - 300_000 });
      const daemon = generateToken('daemon');
      await w.database.db
        .updateTable('servers')
        .set({ daemon_token_hash: hashToken(daemon), name: 'comes-back' })
        .where('id', '=', back!)
        .execute();
      await w.database.db.updateTable('servers').set({ name: 'stays-silent' }).where('id', '=', silent!).execute();

      // Check-ins every 5 s; rounds every second.
      const p = await startConsoleProcess({
        ...w.env,
        PALISADE_CHECKIN_INTERVAL_S: '5',
        PALISADE_ALERT_INTERVAL_S: '1',
      });
      try {
        // The agent that was waiting for the console comes back within its interval (5 s), as agents
        // do (docs/agent.md), after the console's first rounds.
        await comesBackAfterTwoRounds(p, daemon);
        // The silent one is told after its grace (one interval plus 15 s).
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
        assert.equal(texts.filter((t) => /stays-silent is offline/.test(t)).length, 1);
      } finally {
        await p.kill('SIGTERM');
      }
    });
  });
}

// A database outage, on PostgreSQL: the console's schema renamed away, so every query fails, then back.
describe('after a database outage (postgres)', { skip: !dialects().includes('postgres') }, () => {
  test('no offline alert for an agent that checks in within one interval of the database coming back', async () => {
    const w = await world('postgres', { name: 'down', kind: 'offline' });
    const schema = w.database.databaseSchema!;
    try {
      const [back, silent] = await addServers(w, 2, { last_seen: Date.now() });
      const daemon = generateToken('daemon');
      await w.database.db
        .updateTable('servers')
        .set({ daemon_token_hash: hashToken(daemon), name: 'comes-back' })
        .where('id', '=', back!)
        .execute();
      await w.database.db.updateTable('servers').set({ name: 'stays-silent' }).where('id', '=', silent!).execute();
      const p = await startConsoleProcess({
        ...w.env,
        PALISADE_CHECKIN_INTERVAL_S: '5',
        PALISADE_ALERT_INTERVAL_S: '1',
      });
      const admin = new pg.Client({ connectionString: w.database.databaseUrl! });
      await admin.connect();
      let away = false;
      try {
        await admin.query(`ALTER SCHEMA "${schema}" RENAME TO "${schema}_away"`);
        away = true;
        await p.waitFor(/alert-evaluation failed/);
        // The outage lasted 300 s as far as the agents' last check-ins go.
        await admin.query(`UPDATE "${schema}_away".servers SET last_seen = last_seen - 300000`);
        await admin.query(`ALTER SCHEMA "${schema}_away" RENAME TO "${schema}"`);
        away = false;
        // The agent that was waiting for the database comes back within its interval (5 s).
        await comesBackAfterTwoRounds(p, daemon);
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
      } finally {
        if (away) await admin.query(`ALTER SCHEMA "${schema}_away" RENAME TO "${schema}"`);
        await admin.end();
        await p.kill('SIGTERM');
      }
    } finally {
      await w.close();
    }
  });
});
