// Agent updates in waves (docs/fleet.md, "Agent updates"): the console's side, driven by real
// check-ins with daemon tokens against a console on SQLite and PostgreSQL, with a real local
// receiver for the failure alert.
import assert from 'node:assert/strict';
import { createHash, generateKeyPairSync, sign } from 'node:crypto';
import { mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { agentUpdateFailedNotificationSchema } from '@palisade/protocol';
import { signatureValid } from '@palisade/testkit';
import { CONSOLE_VERSION } from '../src/config.js';
import { servedAgentVersion } from '../src/release-key.js';
import { alertTools, receiver } from './alerts-support.js';
import { dialects, insertTestServer, registerUser, type TestApp, type TestUser, testApp } from './support.js';

const TARGET = '9.9.9-rc.1';
const OLD = '0.1.0';

/** A signed release of agent TARGET in a directory of its own, as npm run package -- --sign-key writes one. */
function release() {
  const dir = mkdtempSync(join(tmpdir(), 'palisade-rollout-'));
  const exe = `palisade-agent-${TARGET}-linux-x64`;
  const mjs = `palisade-agent-${TARGET}.mjs`;
  writeFileSync(join(dir, exe), '#!/bin/sh\necho stand-in agent\n');
  writeFileSync(join(dir, mjs), 'console.log("stand-in agent");\n');
  const sum = (name: string) => createHash('sha256').update(name).digest('hex');
  const sums = `${sum(exe)}  ${exe}\n${sum(mjs)}  ${mjs}\n`;
  writeFileSync(join(dir, 'SHA256SUMS'), sums);
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const raw = Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url').toString('base64');
  const signFiles = () => {
    writeFileSync(join(dir, 'SHA256SUMS.sig'), sign(null, Buffer.from(sums), privateKey));
    writeFileSync(join(dir, 'release.pub'), `${raw}\n`);
  };
  signFiles();
  return {
    dir,
    unsign: () => unlinkSync(join(dir, 'SHA256SUMS.sig')),
    sign: signFiles,
    hide: () => unlinkSync(join(dir, 'SHA256SUMS')),
    show: () => writeFileSync(join(dir, 'SHA256SUMS'), sums),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

test('the served version is read strictly from SHA256SUMS: a line naming no valid version is passed over', () => {
  const dir = mkdtempSync(join(tmpdir(), 'palisade-sums-'));
  try {
    const sum = 'a'.repeat(64);
    const served = (text: string) => {
      writeFileSync(join(dir, 'SHA256SUMS'), text);
      return servedAgentVersion(dir, CONSOLE_VERSION);
    };
    assert.deepEqual(servedAgentVersion(dir, CONSOLE_VERSION), { version: CONSOLE_VERSION, listed: false });
    for (const bad of ['../../etc/x', '1.2', '1.2.3-', `1.2.3-${'x'.repeat(33)}`, '1.2.3 ', '1.2.3/x', '1.2.3-a_b']) {
      assert.deepEqual(
        served(`${sum}  palisade-agent-${bad}-linux-x64\n`),
        { version: CONSOLE_VERSION, listed: false },
        bad,
      );
    }
    assert.deepEqual(served(`${sum}  palisade-agent_2.0.0_amd64.deb\n`), { version: CONSOLE_VERSION, listed: false });
    assert.deepEqual(served(`${sum}  palisade-agent-2.0.0.mjs\n`), { version: '2.0.0', listed: true });
    assert.deepEqual(
      served(`${sum}  palisade-agent-2.0.0.mjs\n${sum}  palisade-agent-2.1.0-rc.2-linux-x64\n`),
      { version: '2.1.0-rc.2', listed: true },
      "the executable's line first",
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

for (const dialect of dialects()) {
  describe(`agent updates in waves (${dialect})`, () => {
    let t: TestApp;
    let files: ReturnType<typeof release>;
    let hooks: Awaited<ReturnType<typeof receiver>>;
    before(async () => {
      files = release();
      hooks = await receiver();
      t = await testApp(dialect, { PALISADE_ALLOW_PRIVATE_TARGETS: '1', PALISADE_ARTIFACTS_DIR: files.dir });
    });
    after(async () => {
      await t.app.services.notifications.settle();
      await t.close();
      await hooks.close();
      files.remove();
    });

    const { addChannel, enrolled, checkin: rawCheckin } = alertTools(() => t);
    const call = (who: TestUser, method: 'GET' | 'POST' | 'PUT', url: string, body?: unknown) =>
      t.app.inject({
        method,
        url,
        headers: { cookie: who.cookie, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
      });
    type Offer = { rollout_id: number; version: string; exe_path: string; health_timeout_s: number };
    const checkin = async (daemon: string, version = OLD, update?: Record<string, unknown>) =>
      (await rawCheckin(daemon, { agent_version: version, ...(update ? { update } : {}) })) as unknown as {
        update?: Offer;
      };
    /** `count` servers that have checked in on the old version, by id. */
    const fleet = async (who: TestUser, count: number, prefix: string) => {
      const servers = [];
      for (let i = 0; i < count; i += 1) {
        const s = await enrolled(who, `${prefix}-${i}`);
        await checkin(s.daemon);
        servers.push(s);
      }
      return servers;
    };
    const start = async (who: TestUser, body: Record<string, unknown>) => {
      const res = await call(who, 'POST', '/api/agent-updates', body);
      assert.equal(res.statusCode, 201, res.body);
      return res.json().data.rollout as { id: number; state: string; current_wave: number; wave_count: number };
    };
    const detail = async (who: TestUser, id: number) => {
      const res = await call(who, 'GET', `/api/agent-updates/${id}`);
      assert.equal(res.statusCode, 200, res.body);
      return res.json().data as {
        rollout: { state: string; current_wave: number; reason: string | null; counts: Record<string, number> };
        servers: { server_id: number; wave: number; state: string; reason: string | null; from_version: string }[];
      };
    };
    const stateOf = async (who: TestUser, id: number) =>
      Object.fromEntries((await detail(who, id)).servers.map((s) => [s.server_id, s.state]));
    const auditActions = async (accountId: number) =>
      (
        await t.db
          .selectFrom('audit_log')
          .select('action')
          .where('account_id', '=', accountId)
          .where('action', 'like', 'agent_update.%')
          .orderBy('id')
          .execute()
      ).map((r) => r.action);

    test('the install routes serve the agent version SHA256SUMS names, not only the console’s', async () => {
      const script = await t.app.inject({ method: 'GET', url: '/install/agent.sh' });
      assert.equal(script.statusCode, 200);
      assert.match(script.body, new RegExp(`'${TARGET.replace(/\./g, '\\.')}'`));
      const exe = await t.app.inject({ method: 'GET', url: `/install/palisade-agent-${TARGET}-linux-x64` });
      assert.equal(exe.statusCode, 200, exe.body);
      assert.equal(exe.body, '#!/bin/sh\necho stand-in agent\n');
      const list = await call(await registerUser(t.app), 'GET', '/api/agent-updates');
      assert.equal(list.statusCode, 200, list.body);
      assert.equal(list.json().data.served_version, TARGET);
      assert.equal(list.json().data.signed, true);
    });

    test('waves advance only once every server of the wave is updated; offers stop once the agent reports', async () => {
      const user = await registerUser(t.app);
      const servers = await fleet(user, 5, 'wave');
      const list = (await call(user, 'GET', '/api/agent-updates')).json().data;
      assert.equal(list.outdated, 5);
      const rollout = await start(user, { waves: '1,3', health_timeout_s: 120 });
      assert.equal(rollout.state, 'running');
      assert.equal(rollout.wave_count, 3, '1,3 becomes 1,3,100%');
      type S = (typeof servers)[number];
      const [a, b, c, d, e] = servers as [S, S, S, S, S];
      let states = await stateOf(user, rollout.id);
      assert.deepEqual(Object.values(states), ['offered', 'pending', 'pending', 'pending', 'pending']);
      assert.equal((await detail(user, rollout.id)).servers[0]!.from_version, OLD);

      // Wave 1 (one server): offered at each check-in until the agent reports, so a lost answer is not a lost offer.
      assert.equal((await checkin(b.daemon)).update, undefined, 'a server of a later wave is not offered yet');
      const offer = (await checkin(a.daemon)).update;
      assert.ok(offer);
      assert.equal(offer.version, TARGET);
      assert.equal(offer.exe_path, `/install/palisade-agent-${TARGET}-linux-x64`);
      assert.equal(offer.health_timeout_s, 120);
      assert.ok((await checkin(a.daemon)).update, 'still offered');
      const report = { rollout_id: rollout.id, version: TARGET, reason: null };
      assert.equal((await checkin(a.daemon, OLD, { ...report, state: 'downloading' })).update, undefined);
      assert.equal((await checkin(a.daemon)).update, undefined, 'not offered again once it reported');
      await checkin(a.daemon, OLD, { ...report, state: 'applying' });
      assert.equal((await stateOf(user, rollout.id))[a.id], 'applying');
      assert.equal((await detail(user, rollout.id)).rollout.current_wave, 0);

      // Checked in on the new version: updated, and the next wave (up to 3 servers in all) starts.
      await checkin(a.daemon, TARGET);
      states = await stateOf(user, rollout.id);
      assert.deepEqual(
        [a, b, c, d, e].map((s) => states[s.id]),
        ['updated', 'offered', 'offered', 'pending', 'pending'],
      );
      assert.ok((await checkin(b.daemon)).update);
      assert.equal((await checkin(d.daemon)).update, undefined);

      // One of wave 2 done, the other not yet: wave 3 waits.
      await checkin(b.daemon, TARGET, { ...report, state: 'updated' });
      await checkin(c.daemon, OLD, { ...report, state: 'applying' });
      await t.app.services.agentUpdates.advance();
      assert.equal((await detail(user, rollout.id)).rollout.current_wave, 1);
      assert.equal((await checkin(d.daemon)).update, undefined, 'the last wave waits for every server of wave 2');
      await checkin(c.daemon, TARGET);
      assert.equal((await detail(user, rollout.id)).rollout.current_wave, 2);
      assert.ok((await checkin(d.daemon)).update);
      await checkin(d.daemon, TARGET);
      assert.equal((await detail(user, rollout.id)).rollout.state, 'running');
      await checkin(e.daemon, TARGET);
      const done = await detail(user, rollout.id);
      assert.equal(done.rollout.state, 'completed');
      assert.equal(done.rollout.counts.updated, 5);
      assert.deepEqual(await auditActions(user.id), [
        'agent_update.start',
        'agent_update.wave',
        'agent_update.wave',
        'agent_update.completed',
      ]);
      assert.equal(
        (await call(user, 'GET', '/api/agent-updates')).json().data.outdated,
        0,
        'every server runs the served version',
      );
    });

    test('a rolled-back server fails the rollout: later servers are skipped, offline ones were skipped, an alert is delivered', async () => {
      const user = await registerUser(t.app);
      const offline = await enrolled(user, 'never-checked-in');
      const [first, later] = (await fleet(user, 2, 'fail')) as [
        { id: number; daemon: string },
        { id: number; daemon: string },
      ];
      const slack = await addChannel(user, { name: 'ops', kind: 'slack', url: `${hooks.base}/slack-rollout` });
      assert.ok(slack.id);
      const hook = await call(user, 'PUT', '/api/account/webhook', { url: `${hooks.base}/signed-rollout` });
      assert.equal(hook.statusCode, 200, hook.body);
      const secret = hook.json().data.secret as string;
      const rollout = await start(user, { waves: '2,100%' });
      let d = await detail(user, rollout.id);
      const byId = (id: number) => d.servers.find((s) => s.server_id === id)!;
      assert.equal(byId(offline.id).state, 'skipped');
      assert.equal(byId(offline.id).reason, 'offline when its wave started');
      assert.equal(byId(first.id).state, 'offered');
      assert.equal(byId(later.id).state, 'pending');

      await checkin(first.daemon, OLD, {
        rollout_id: rollout.id,
        version: TARGET,
        state: 'rolled_back',
        reason: 'the new agent did not check in within 600 s',
      });
      d = await detail(user, rollout.id);
      assert.equal(d.rollout.state, 'failed');
      assert.match(d.rollout.reason!, /fail-0 rolled back: the new agent did not check in within 600 s/);
      assert.equal(byId(first.id).state, 'rolled_back');
      assert.equal(byId(later.id).state, 'skipped');
      assert.equal(byId(later.id).reason, 'the rollout failed at wave 1');
      assert.equal((await checkin(later.daemon)).update, undefined);
      assert.deepEqual(await auditActions(user.id), ['agent_update.start', 'agent_update.failed']);

      // Delivered once, through the outbox, to the account's channel.
      await t.app.services.notifications.runOnce(50);
      const got = hooks.got.filter((r) => r.path === '/slack-rollout');
      assert.equal(got.length, 1);
      assert.match(
        JSON.parse(got[0]!.body).text,
        new RegExp(`Agent update to ${TARGET.replace(/\./g, '\\.')} failed at wave 1 on fail-0`),
      );
      const signed = hooks.got.filter((r) => r.path === '/signed-rollout');
      assert.equal(signed.length, 1, 'and once to the account’s signed webhook');
      assert.equal(signed[0]!.headers['x-palisade-event'], 'agent_update.failed');
      assert.ok(signatureValid(signed[0]!.headers['x-palisade-signature'], signed[0]!.body, secret));
      const payload = agentUpdateFailedNotificationSchema.parse(JSON.parse(signed[0]!.body));
      assert.deepEqual(
        [payload.rollout_id, payload.wave, payload.server_id, payload.server],
        [rollout.id, 0, first.id, 'fail-0'],
      );
      assert.match(payload.reason, /rolled back: the new agent did not check in within 600 s/);
      await t.app.services.agentUpdates.advance();
      await t.app.services.notifications.runOnce(50);
      assert.equal(hooks.got.filter((r) => r.path === '/slack-rollout').length, 1, 'alerted once');
      assert.equal(hooks.got.filter((r) => r.path === '/signed-rollout').length, 1);

      // A new rollout may start once this one ended.
      assert.equal((await start(user, {})).state, 'running');
    });

    test('a server not updated within health_timeout_s + 300 s of its offer fails the rollout', async () => {
      const user = await registerUser(t.app);
      const [only] = await fleet(user, 1, 'slow');
      const rollout = await start(user, { health_timeout_s: 30 });
      assert.ok((await checkin(only!.daemon)).update);
      t.clock.advance(329_000);
      await t.app.services.agentUpdates.advance();
      assert.equal((await detail(user, rollout.id)).rollout.state, 'running');
      t.clock.advance(1000);
      await checkin(only!.daemon);
      await t.app.services.agentUpdates.advance();
      const d = await detail(user, rollout.id);
      assert.equal(d.rollout.state, 'failed');
      assert.equal(d.servers[0]!.state, 'failed');
      assert.equal(d.servers[0]!.reason, 'not updated within 330 s of its offer');
    });

    test('cancel: servers not offered are skipped, offered ones finish on their own; a second cancel is refused', async () => {
      const user = await registerUser(t.app);
      const [x, y] = (await fleet(user, 2, 'cancel')) as [
        { id: number; daemon: string },
        { id: number; daemon: string },
      ];
      const rollout = await start(user, { waves: '1' });
      const res = await call(user, 'POST', `/api/agent-updates/${rollout.id}/cancel`, {});
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().data.rollout.state, 'cancelled');
      const d = await detail(user, rollout.id);
      assert.equal(d.servers.find((s) => s.server_id === y.id)!.reason, 'cancelled');
      assert.equal(d.servers.find((s) => s.server_id === x.id)!.state, 'offered');
      assert.equal((await checkin(x.daemon)).update, undefined, 'no offer from a cancelled rollout');
      await checkin(x.daemon, TARGET, { rollout_id: rollout.id, version: TARGET, state: 'updated', reason: null });
      assert.equal(
        (await stateOf(user, rollout.id))[x.id],
        'updated',
        'the in-flight server’s report is still recorded',
      );
      const again = await call(user, 'POST', `/api/agent-updates/${rollout.id}/cancel`, {});
      assert.equal(again.statusCode, 409);
      assert.match(again.json().error, /only a running rollout can be cancelled/);
      assert.deepEqual(await auditActions(user.id), ['agent_update.start', 'agent_update.cancel']);
    });

    test('refusals: 400 naming the field, 409 saying what to do, 403 without the permission, 404 for another account’s', async () => {
      const user = await registerUser(t.app);
      await fleet(user, 1, 'refuse');
      for (const [body, pattern] of [
        [{ waves: '1,,100%' }, /^waves: expected counts or percentages/],
        [{ waves: '150%' }, /^waves: 150% is not a percentage/],
        [{ waves: '0' }, /^waves: /],
        [{ waves: 'all' }, /^waves: "all" is not a count/],
        [{ waves: '1,2,3,4,5,6,7,8,9,10,11' }, /^waves: at most 10 waves/],
        [{ tag: 'Not A Tag!' }, /^tag: /],
        [{ health_timeout_s: 5 }, /^health_timeout_s: /],
        [{ health_timeout_s: 'long' }, /^health_timeout_s: /],
      ] as const) {
        const res = await call(user, 'POST', '/api/agent-updates', body);
        assert.equal(res.statusCode, 400, `${JSON.stringify(body)}: ${res.body}`);
        assert.match(res.json().error, pattern);
      }
      const tagged = await call(user, 'POST', '/api/agent-updates', { tag: 'nothing-has-it' });
      assert.equal(tagged.statusCode, 409);
      assert.match(tagged.json().error, /nothing to update: every server tagged nothing-has-it already runs/);

      files.unsign();
      try {
        const unsigned = await call(user, 'POST', '/api/agent-updates', {});
        assert.equal(unsigned.statusCode, 409);
        assert.match(unsigned.json().error, /unsigned, and agents refuse unsigned updates: .*--sign-key/);
        assert.equal((await call(user, 'GET', '/api/agent-updates')).json().data.signed, false);
      } finally {
        files.sign();
      }
      files.hide();
      try {
        const none = await call(user, 'POST', '/api/agent-updates', {});
        assert.equal(none.statusCode, 409);
        assert.match(none.json().error, /no agent packages to roll out: .*npm run package/);
        assert.equal((await call(user, 'GET', '/api/agent-updates')).json().data.served_version, null);
      } finally {
        files.show();
      }

      const rollout = await start(user, {});
      const twice = await call(user, 'POST', '/api/agent-updates', {});
      assert.equal(twice.statusCode, 409);
      assert.match(twice.json().error, new RegExp(`rollout ${rollout.id} to .* is still running: .*cancel`));

      const other = await registerUser(t.app);
      assert.equal((await call(other, 'GET', `/api/agent-updates/${rollout.id}`)).statusCode, 404);
      assert.equal((await call(other, 'POST', `/api/agent-updates/${rollout.id}/cancel`, {})).statusCode, 404);

      await t.db
        .updateTable('team_members')
        .set({ revoked: '["control.edit"]' })
        .where('person_id', '=', other.id)
        .execute();
      await t.app.services.coherence.changed(other.id);
      const refused = await call(other, 'POST', '/api/agent-updates', {});
      assert.equal(refused.statusCode, 403, refused.body);
      assert.match(refused.json().error, /control\.edit/);
      assert.equal((await call(other, 'GET', '/api/agent-updates')).statusCode, 200);
      await t.db
        .updateTable('team_members')
        .set({ revoked: '["control.edit","control.read"]' })
        .where('person_id', '=', other.id)
        .execute();
      await t.app.services.coherence.changed(other.id);
      assert.equal((await call(other, 'GET', '/api/agent-updates')).statusCode, 403);
    });

    test('a rollout of 200 servers: waves by share, every server in the detail', async () => {
      const user = await registerUser(t.app);
      const ids: number[] = [];
      for (let i = 0; i < 200; i += 1) {
        ids.push((await insertTestServer(t.app, user, { name: `bulk-${i}`, last_seen: t.clock.now })).id);
      }
      const rollout = await start(user, { waves: '10%,50%' });
      let d = await detail(user, rollout.id);
      assert.equal(d.servers.length, 200);
      assert.deepEqual(
        d.servers.map((s) => s.server_id),
        ids,
      );
      const perWave = (w: number) => d.servers.filter((s) => s.wave === w).length;
      assert.deepEqual([perWave(0), perWave(1), perWave(2)], [20, 80, 100]);
      assert.equal(d.rollout.counts.offered, 20);
      await t.db
        .updateTable('agent_rollout_servers')
        .set({ state: 'updated' })
        .where('rollout_id', '=', rollout.id)
        .where('wave', '=', 0)
        .execute();
      await t.app.services.agentUpdates.advance();
      d = await detail(user, rollout.id);
      assert.equal(d.rollout.current_wave, 1);
      assert.deepEqual([d.rollout.counts.updated, d.rollout.counts.offered, d.rollout.counts.pending], [20, 80, 100]);
      const cancelled = await call(user, 'POST', `/api/agent-updates/${rollout.id}/cancel`, {});
      assert.equal(cancelled.json().data.rollout.counts.skipped, 100);
    });

    test('several console processes advancing at once start a wave once', async () => {
      const user = await registerUser(t.app);
      const servers = await fleet(user, 3, 'race');
      const rollout = await start(user, { waves: '1,2' });
      // The first server's update is recorded (as its report would be); then every console sees the wave done at once.
      await t.db
        .updateTable('agent_rollout_servers')
        .set({ state: 'updated' })
        .where('rollout_id', '=', rollout.id)
        .where('server_id', '=', servers[0]!.id)
        .execute();
      const { anotherConsole } = alertTools(() => t);
      const consoles = [anotherConsole(), anotherConsole(), anotherConsole(), t.app.services];
      await Promise.all(consoles.map((c) => c.agentUpdates.advance()));
      const d = await detail(user, rollout.id);
      assert.equal(d.rollout.current_wave, 1);
      assert.deepEqual(
        d.servers.map((s) => s.state),
        ['updated', 'offered', 'pending'],
      );
      assert.deepEqual(await auditActions(user.id), ['agent_update.start', 'agent_update.wave']);
    });
  });
}
