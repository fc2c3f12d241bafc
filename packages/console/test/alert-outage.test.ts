// Alert evaluation after an outage and when late (docs/alerts.md, "Timing" and "After a restart or an
// outage"): real console processes on one database. Restarts mid-round: alert-rounds.test.ts.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
/** Servers in the long rounds: enough that their first round takes a while (each one's alert is a transition). */
import {
  backAndSilent,
  comesBackAfterTwoRounds,
  evaluationOf,
  onlySilentAlerted,
  outdated,
  type World,
  world,
} from './alert-rounds-support.js';
import { startConsoleProcess } from './console-process.js';
import { get, parseMetrics } from './observability-support.js';
import { dialects, registerUser, testApp } from './support.js';

for (const dialect of dialects()) {
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
      const daemon = await backAndSilent(w, Date.now() - 300_000);

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
        const texts = await onlySilentAlerted(w);
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
      const daemon = await backAndSilent(w, Date.now());
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
        await onlySilentAlerted(w);
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
