// Alert evaluation across console restarts, stops and deaths (docs/alerts.md, "Timing"): real console
// processes on one database, killed or stopped mid-round. Outages: alert-outage.test.ts.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
/** Servers in the long rounds: enough that their first round takes a while (each one's alert is a transition). */
import {
  addServers,
  evaluatesAgain,
  evaluationLease,
  MANY,
  outdated,
  roundRunning,
  world,
} from './alert-rounds-support.js';
import { startConsoleProcess } from './console-process.js';
import { dialects } from './support.js';

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
}
