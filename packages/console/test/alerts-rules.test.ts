import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { CONSOLE_VERSION } from '../src/config.js';
import { alertTools, receiver } from './alerts-support.js';
import {
  benchmarkReport,
  dialects,
  registerUser,
  standInAgent,
  type TestApp,
  type TestUser,
  testApp,
} from './support.js';

// The rules beyond offline/metric/score/attack (docs/alerts.md, "Rules"), and what
// disabling a rule, narrowing its scope or muting a server does to an alert that is firing.

const FACTS = { os: 'Debian GNU/Linux 12', kernel: '6.1.0', cores: 4, arch: 'x64', mem_total_mb: 8000 };

/** A benchmark report; `cores` other than the check-in's 4 fails "cores match". */
const report = (cores: number) =>
  benchmarkReport({ hardware: { cores, mem_total_mb: 8000, cpu_model: 'Test CPU', arch: 'x64' } });

for (const dialect of dialects()) {
  describe(`alert rules: unreachable, benchmark, outdated agent, disabling (${dialect})`, () => {
    let t: TestApp;
    let hooks: Awaited<ReturnType<typeof receiver>>;
    before(async () => {
      hooks = await receiver();
      t = await testApp(dialect, { PALISADE_ALLOW_PRIVATE_TARGETS: '1' });
    });
    after(async () => {
      await t.app.services.notifications.settle();
      await t.close();
      await hooks.close();
    });
    const {
      call,
      addChannel,
      addRule,
      enrolled,
      checkin,
      alertRows,
      anotherConsole,
      evaluateOnConsoles,
      deliveredTitles,
    } = alertTools(() => t);

    /** Evaluates once and answers the account's alert kinds so far, without the `alert.` prefix. */
    const evaluate = async (user: TestUser) => {
      await t.app.services.alerts.evaluate();
      return (await alertRows(user.id)).map((r) => r.kind.replace('alert.', ''));
    };
    const slackChannel = (user: TestUser, path: string) =>
      addChannel(user, { name: 'slack', kind: 'slack', url: `${hooks.base}${path}` });

    test('unreachable for N minutes: the fleet state decides; fires once, quiet while offline, resolves when online', async () => {
      const user = await registerUser(t.app);
      let status = 200;
      const agent = standInAgent(() => status);
      await new Promise<void>((resolve) => agent.listen(0, '127.0.0.1', resolve));
      try {
        const server = await enrolled(user, 'api-3', {
          agentUrl: `http://127.0.0.1:${(agent.address() as AddressInfo).port}`,
        });
        const control = () => call(user, 'GET', `/api/servers/${server.id}/control?path=whitelist`);
        const state = async () =>
          (await call(user, 'GET', `/api/servers/${server.id}/section?name=overview`)).json().data.state;
        await checkin(server.daemon);
        const slack = await slackChannel(user, '/slack-unreachable');
        const tooLong = await call(user, 'POST', '/api/alerts/rules', {
          name: 'x',
          kind: 'unreachable',
          minutes: 2000,
          channel_ids: [slack.id],
        });
        assert.equal(tooLong.statusCode, 400);
        assert.match(tooLong.json().error, /^minutes: expected 0 to 1440/);
        const rule = await addRule(user, {
          name: 'no answer',
          kind: 'unreachable',
          minutes: 5,
          channel_ids: [slack.id],
        });
        assert.equal(rule.minutes, 5);
        assert.equal((await control()).statusCode, 200);
        assert.deepEqual(await evaluate(user), []);

        status = 401; // the agent refuses the console's key: unreachable (services/servers/state.ts)
        assert.equal((await control()).statusCode, 502);
        assert.equal(await state(), 'unreachable');
        assert.deepEqual(await evaluate(user), [], 'unreachable, but not for 5 minutes yet');
        t.clock.advance(4 * 60_000);
        await checkin(server.daemon);
        assert.deepEqual(await evaluate(user), [], '4 minutes');
        t.clock.advance(60_000);
        await checkin(server.daemon);
        assert.deepEqual(await evaluate(user), ['fired'], '5 minutes');
        t.clock.advance(60_000);
        assert.deepEqual(await evaluate(user), ['fired'], 'once per incident');

        // Offline is the offline rule's to tell: nothing here, and the incident goes on.
        t.clock.advance(3 * 60_000);
        assert.equal(await state(), 'offline');
        assert.deepEqual(await evaluate(user), ['fired']);
        await checkin(server.daemon);
        assert.equal(await state(), 'unreachable');
        assert.deepEqual(await evaluate(user), ['fired'], 'back, still not answering: the same incident');

        status = 200;
        assert.equal((await control()).statusCode, 200);
        assert.equal(await state(), 'online');
        assert.deepEqual(await evaluate(user), ['fired', 'resolved']);
        assert.deepEqual(await evaluate(user), ['fired', 'resolved']);
        assert.deepEqual(await deliveredTitles(hooks.got, '/slack-unreachable', user.id), [
          'api-3 is unreachable',
          'api-3 is reachable again',
        ]);
        const fired = JSON.parse((await alertRows(user.id))[0]!.payload);
        assert.equal(fired.value, 5, 'minutes the calls have failed');
        assert.match(fired.body, /failed for 5 min: the agent rejected the key/);
      } finally {
        await new Promise((resolve) => agent.close(resolve));
      }
    });

    test('benchmark unverified: one notification per unverified run, once across consoles and after a restart', async () => {
      const user = await registerUser(t.app);
      const slack = await slackChannel(user, '/slack-bench');
      const server = await enrolled(user, 'bench-1', { facts: FACTS });
      const agentCall = (token: string, path: string, body: unknown = {}) =>
        t.app.inject({
          method: 'POST',
          url: path,
          headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
          payload: JSON.stringify(body),
        });
      /** A real run through the routes the agent uses: created, handed out in a check-in, started, reported. */
      async function run(label: string, cores: number) {
        const created = await call(user, 'POST', `/api/servers/${server.id}/benchmarks`, { label });
        assert.equal(created.statusCode, 201, created.body);
        const [job] = (await checkin(server.daemon, { facts: FACTS })).jobs;
        assert.equal((await agentCall(job!.token, `${job!.report_path}/start`)).statusCode, 200);
        assert.equal((await agentCall(job!.token, `${job!.report_path}/result`, report(cores))).statusCode, 200);
        const row = await t.db
          .selectFrom('benchmark_runs')
          .select('verified')
          .where('id', '=', created.json().data.run.id)
          .executeTakeFirstOrThrow();
        assert.equal(Number(row.verified), cores === 4 ? 1 : 0);
        t.clock.advance(1000);
      }
      await checkin(server.daemon, { facts: FACTS });
      await run('before the rule', 64);
      const rule = await addRule(user, {
        name: 'forged',
        kind: 'benchmark_unverified',
        repeat_minutes: 30,
        channel_ids: [slack.id],
      });
      assert.equal(rule.repeat_minutes, 0, 'an event does not last, so it does not repeat');
      assert.deepEqual(await evaluate(user), [], 'a run from before the rule is not sent');
      await run('honest', 4);
      await run('forged', 64);

      await evaluateOnConsoles(3, 2);
      assert.deepEqual(await evaluate(user), ['fired'], 'one notification for the one unverified run');
      t.clock.advance(60 * 60_000);
      const restarted = anotherConsole();
      await restarted.alerts.evaluate();
      assert.deepEqual(await evaluate(user), ['fired'], 'a restarted console sends nothing again, nor resolved');
      await run('forged again', 2);
      await run('and again', 8);
      assert.deepEqual(await evaluate(user), ['fired', 'fired', 'fired']);
      assert.deepEqual(await deliveredTitles(hooks.got, '/slack-bench', user.id), [
        'bench-1: benchmark "forged" came out unverified',
        'bench-1: benchmark "forged again" came out unverified',
        'bench-1: benchmark "and again" came out unverified',
      ]);
      const body = JSON.parse((await alertRows(user.id))[0]!.payload).body;
      assert.match(body, /failed: cores match: /);
    });

    test('agent older than the console: fires on the check-in that reports it, resolves when upgraded', async () => {
      const user = await registerUser(t.app);
      const slack = await slackChannel(user, '/slack-outdated');
      const server = await enrolled(user, 'old-1');
      await addRule(user, { name: 'outdated', kind: 'agent_outdated', channel_ids: [slack.id] });
      await checkin(server.daemon, { agent_version: CONSOLE_VERSION });
      assert.deepEqual(await evaluate(user), [], 'same version as the console');
      await checkin(server.daemon, { agent_version: '0.0.1' });
      assert.deepEqual(await evaluate(user), ['fired']);
      await checkin(server.daemon, { agent_version: '0.0.1' });
      assert.deepEqual(await evaluate(user), ['fired']);
      await checkin(server.daemon, { agent_version: CONSOLE_VERSION });
      assert.deepEqual(await evaluate(user), ['fired', 'resolved']);
      assert.deepEqual(await deliveredTitles(hooks.got, '/slack-outdated', user.id), [
        `old-1: agent 0.0.1 is older than the console (${CONSOLE_VERSION})`,
        `old-1: agent upgraded to ${CONSOLE_VERSION}`,
      ]);
    });

    test('a new threshold keeps a firing alert: the next round resolves it if it no longer holds', async () => {
      const user = await registerUser(t.app);
      const slack = await slackChannel(user, '/slack-threshold');
      const server = await enrolled(user, 'disk-1');
      await checkin(server.daemon);
      const body = { name: 'disk', kind: 'metric', metric: 'disk', threshold: 10, channel_ids: [slack.id] };
      const rule = await addRule(user, body);
      assert.deepEqual(await evaluate(user), ['fired'], 'the disk is above 10 %');
      const put = async (fields: Record<string, unknown>) =>
        assert.equal((await call(user, 'PUT', `/api/alerts/rules/${rule.id}`, { ...body, ...fields })).statusCode, 200);
      await put({ threshold: 5 });
      await checkin(server.daemon);
      assert.deepEqual(await evaluate(user), ['fired'], 'still above the new level: nothing new');
      await put({ threshold: 99 });
      await checkin(server.daemon);
      assert.deepEqual(await evaluate(user), ['fired', 'resolved'], 'raised past it: one resolved');
      await put({ threshold: 10 });
      await checkin(server.daemon);
      assert.deepEqual(await evaluate(user), ['fired', 'resolved', 'fired'], 'lowered again: it fires again');
      await put({ metric: 'cpu', threshold: 1 });
      assert.equal(
        (await t.db.selectFrom('alert_states').select('rule_id').where('rule_id', '=', rule.id).execute()).length,
        0,
        'another metric is another alert: the states are forgotten, no resolved',
      );
    });

    test('a rule by tag covers the servers carrying it, now or later; a server losing it is forgotten', async () => {
      const user = await registerUser(t.app);
      const slack = await slackChannel(user, '/slack-tags');
      const db1 = await enrolled(user, 'db-1');
      const web1 = await enrolled(user, 'web-1');
      const tag = async (id: number, tags: string[]) =>
        assert.equal((await call(user, 'PATCH', `/api/servers/${id}`, { tags })).statusCode, 200);
      await tag(db1.id, ['db']);
      await tag(web1.id, ['web']);
      await checkin(db1.daemon);
      await checkin(web1.daemon);
      const bad = await call(user, 'POST', '/api/alerts/rules', {
        name: 'x',
        kind: 'offline',
        channel_ids: [slack.id],
        tags: ['Not a tag'],
      });
      assert.equal(bad.statusCode, 400);
      assert.match(bad.json().error, /^tags\.0: expected 1 to 32 of a-z/);
      const rule = await addRule(user, { name: 'db down', kind: 'offline', channel_ids: [slack.id], tags: ['db'] });
      assert.deepEqual([rule.server_ids, rule.tags], [null, ['db']]);
      t.clock.advance(3 * 60_000);
      assert.deepEqual(await evaluate(user), ['fired'], 'only the db server');
      await tag(web1.id, ['web', 'db']);
      assert.deepEqual(await evaluate(user), ['fired', 'fired'], 'a server tagged later is covered');
      const states = () =>
        t.db
          .selectFrom('alert_states')
          .select('server_id')
          .where('rule_id', '=', rule.id)
          .orderBy('server_id')
          .execute();
      assert.equal((await states()).length, 2);
      // Narrowing the rule to a server list plus the tag keeps both; dropping the tag forgets web-1.
      const put = (fields: Record<string, unknown>) =>
        call(user, 'PUT', `/api/alerts/rules/${rule.id}`, {
          name: 'db down',
          kind: 'offline',
          channel_ids: [slack.id],
          ...fields,
        });
      assert.equal((await put({ tags: ['web'], server_ids: [db1.id] })).statusCode, 200);
      assert.equal((await states()).length, 2, 'db-1 by id, web-1 by tag: both kept');
      assert.equal((await put({ tags: null, server_ids: [db1.id] })).statusCode, 200);
      assert.deepEqual(
        (await states()).map((r) => Number(r.server_id)),
        [db1.id],
        'web-1 left the scope while firing: forgotten, no resolved',
      );
      const sent = await deliveredTitles(hooks.got, '/slack-tags', user.id);
      assert.deepEqual(sent.sort(), ['db-1 is offline', 'web-1 is offline']);
    });

    test('disabled, narrowed or muted while firing: no "resolved"; turned on again it starts fresh', async () => {
      const user = await registerUser(t.app);
      const slack = await slackChannel(user, '/slack-disabled');
      const a = await enrolled(user, 'a-1');
      const b = await enrolled(user, 'b-1');
      await checkin(a.daemon);
      await checkin(b.daemon);
      const body = { name: 'down', kind: 'offline', channel_ids: [slack.id] };
      const rule = await addRule(user, body);
      const put = async (fields: Record<string, unknown>) => {
        const res = await call(user, 'PUT', `/api/alerts/rules/${rule.id}`, { ...body, ...fields });
        assert.equal(res.statusCode, 200, res.body);
      };
      const states = () => t.db.selectFrom('alert_states').select('server_id').where('rule_id', '=', rule.id).execute();
      t.clock.advance(3 * 60_000);
      assert.deepEqual(await evaluate(user), ['fired', 'fired'], 'both offline');

      await put({ name: 'servers down' });
      assert.equal((await states()).length, 2, 'a new name keeps the states');
      assert.deepEqual(await evaluate(user), ['fired', 'fired']);

      await put({ enabled: false });
      assert.deepEqual(await states(), [], 'disabling forgets the states');
      await checkin(a.daemon);
      assert.deepEqual(await evaluate(user), ['fired', 'fired'], 'disabled: no resolved');
      await put({ enabled: true });
      assert.deepEqual(await evaluate(user), ['fired', 'fired', 'fired'], 'on again: b is offline, a fresh alert');

      await put({ server_ids: [a.id] });
      assert.deepEqual(await states(), [], 'b left the scope while firing: forgotten (a is online: no state)');
      await checkin(b.daemon);
      assert.deepEqual(await evaluate(user), ['fired', 'fired', 'fired'], 'b came back, outside the scope: nothing');

      // Muted while firing: the end is recorded, not sent; after the mute it starts fresh.
      t.clock.advance(3 * 60_000);
      assert.deepEqual(await evaluate(user), ['fired', 'fired', 'fired', 'fired'], 'a offline again');
      const mute = await call(user, 'PUT', `/api/alerts/mutes/${a.id}`, { until: t.clock.now + 10 * 60_000 });
      assert.equal(mute.statusCode, 200);
      await checkin(a.daemon);
      assert.deepEqual(await evaluate(user), ['fired', 'fired', 'fired', 'fired'], 'muted: no resolved');
      t.clock.advance(11 * 60_000);
      await checkin(a.daemon);
      assert.deepEqual(await evaluate(user), ['fired', 'fired', 'fired', 'fired'], 'the mute ended, a is online');
      const sent = await deliveredTitles(hooks.got, '/slack-disabled', user.id);
      assert.equal(sent.length, 4);
      assert.ok(
        sent.every((title) => / is offline$/.test(title)),
        sent.join(', '),
      );
    });
  });
}
