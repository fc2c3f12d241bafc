// The alerter of a real daemon against a real local receiver that is fast, slow, failing and
// absent. Test events are queued through the daemon's control socket, as `alert-test` does.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { alertPayloadSchema } from '@palisade/protocol/webhooks';
import { controlRequest } from '../src/api/control-socket.js';
import {
  type AgentProcess,
  closedPort,
  eventually,
  request,
  runCli,
  signatureValid,
  startAgent,
  startReceiver,
} from './agent-process.js';

const alerterState = async (agent: AgentProcess) =>
  (await request(`${agent.url}/metrics`, { key: agent.key })).json.alerter as {
    webhook_set: boolean;
    queued: number;
    sent: number;
    dropped: number;
    last_success_at: number | null;
    last_error: string | null;
  };

const queueTests = (agent: AgentProcess, count: number) =>
  controlRequest<{ queued: number; dropped: number; ids: string[] }>(
    join(agent.stateDir, 'agent.sock'),
    'POST',
    `/alert-test?count=${count}`,
  );

describe('alerter', () => {
  test('fast receiver: every event delivered once, signed, with the documented payload', async (t) => {
    const receiver = await startReceiver('ok');
    t.after(() => receiver.close());
    const secret = 'a-long-shared-secret';
    const agent = await startAgent({ 'alerter.url': receiver.url, 'alerter.secret': secret });
    t.after(() => agent.stop());
    assert.equal((await alerterState(agent)).webhook_set, true);
    const prometheus = async () => (await request(`${agent.url}/metrics/prometheus`, { key: agent.key })).body;
    assert.doesNotMatch(await prometheus(), /palisade_alerter_last_success_timestamp_seconds/);

    const queued = await queueTests(agent, 3);
    assert.equal(queued.queued, 3);
    assert.equal(queued.dropped, 0);
    const state = await eventually('3 deliveries', async () => {
      const s = await alerterState(agent);
      return s.sent === 3 ? s : undefined;
    });
    assert.equal(state.queued, 0);
    assert.equal(state.dropped, 0);
    assert.equal(state.last_error, null);
    assert.equal(typeof state.last_success_at, 'number');
    assert.match(
      await prometheus(),
      new RegExp(
        `^palisade_alerter_last_success_timestamp_seconds ${String(state.last_success_at! / 1000).replace('.', '\\.')}$`,
        'm',
      ),
    );
    assert.equal(receiver.deliveries.length, 3);
    const ids = receiver.deliveries.map((d) => JSON.parse(d.body).id);
    assert.deepEqual(ids, queued.ids);
    for (const d of receiver.deliveries) {
      assert.ok(
        signatureValid(d.headers['x-palisade-signature'], d.body, secret),
        String(d.headers['x-palisade-signature']),
      );
      assert.equal(d.headers['content-type'], 'application/json');
      const event = JSON.parse(d.body);
      assert.ok(alertPayloadSchema.safeParse(event).success, d.body);
      assert.deepEqual(Object.keys(event).sort(), ['attack', 'host', 'id', 'ts', 'type']);
      assert.equal(event.type, 'test');
      assert.equal(event.attack, null);
      assert.equal(typeof event.host.hostname, 'string');
      assert.ok('public_ip' in event.host);
      assert.ok(Number.isInteger(event.ts));
    }
    assert.ok(!signatureValid(receiver.deliveries[0]!.headers['x-palisade-signature'], '{}', secret));

    const cli = await runCli(['alert-test', '--state-dir', agent.stateDir, '--config', agent.configFile]);
    assert.equal(cli.code, 0, cli.out);
    assert.match(cli.stdout, /delivered 1, dropped 0/);
    assert.equal((await alerterState(agent)).sent, 4);
  });

  test('no secret: no signature header', async (t) => {
    const receiver = await startReceiver('ok');
    t.after(() => receiver.close());
    const agent = await startAgent({ 'alerter.url': receiver.url });
    t.after(() => agent.stop());
    await queueTests(agent, 1);
    await eventually('delivery', async () => ((await alerterState(agent)).sent === 1 ? true : undefined));
    assert.equal(receiver.deliveries[0]!.headers['x-palisade-signature'], undefined);
  });

  test('slow receiver: events wait in the bounded queue, overflow is dropped and counted', async (t) => {
    const receiver = await startReceiver('hold');
    t.after(() => receiver.close());
    const agent = await startAgent({
      'alerter.url': receiver.url,
      'alerter.queue_max': '3',
      'alerter.timeout_ms': '60000',
    });
    t.after(() => agent.stop());
    const queued = await queueTests(agent, 5);
    assert.deepEqual([queued.queued, queued.dropped], [3, 2]);
    await eventually('the first delivery to arrive', () => (receiver.held.length === 1 ? true : undefined));
    let state = await alerterState(agent);
    assert.deepEqual([state.queued, state.sent, state.dropped], [3, 0, 2]);
    const more = await queueTests(agent, 1);
    assert.deepEqual([more.queued, more.dropped], [0, 1]);
    state = await alerterState(agent);
    assert.deepEqual([state.queued, state.sent, state.dropped], [3, 0, 3]);
    assert.equal(state.last_success_at, null);

    receiver.setMode('ok');
    receiver.release();
    state = await eventually('the queue to drain', async () => {
      const s = await alerterState(agent);
      return s.queued === 0 ? s : undefined;
    });
    assert.deepEqual([state.queued, state.sent, state.dropped], [0, 3, 3]);
    assert.equal(state.last_error, null);
    assert.equal(receiver.deliveries.length, 3);
  });

  test('receiver slower than alerter.timeout_ms: counted as a timeout, then dropped', async (t) => {
    const receiver = await startReceiver('hold');
    t.after(() => receiver.close());
    const agent = await startAgent({
      'alerter.url': receiver.url,
      'alerter.timeout_ms': '300',
      'alerter.retries': '0',
    });
    t.after(() => agent.stop());
    await queueTests(agent, 1);
    const state = await eventually('the drop', async () => {
      const s = await alerterState(agent);
      return s.dropped === 1 ? s : undefined;
    });
    assert.deepEqual([state.queued, state.sent, state.dropped], [0, 0, 1]);
    assert.equal(state.last_error, 'the endpoint did not answer within 300 ms');
  });

  test('failing receiver (500): retried with back-off, then dropped; last_error names the status', async (t) => {
    const receiver = await startReceiver('fail');
    t.after(() => receiver.close());
    const agent = await startAgent({
      'alerter.url': receiver.url,
      'alerter.retries': '2',
      'alerter.backoff_ms': '20',
    });
    t.after(() => agent.stop());
    await queueTests(agent, 1);
    const state = await eventually('the drop', async () => {
      const s = await alerterState(agent);
      return s.dropped === 1 ? s : undefined;
    });
    assert.deepEqual([state.queued, state.sent, state.dropped], [0, 0, 1]);
    assert.equal(state.last_error, 'the endpoint answered HTTP 500');
    assert.equal(state.last_success_at, null);
    assert.equal(receiver.deliveries.length, 3, 'one try and two retries');
    const ids = new Set(receiver.deliveries.map((d) => JSON.parse(d.body).id));
    assert.equal(ids.size, 1, 'retries resend the same event');

    const cli = await runCli(['alert-test', '--state-dir', agent.stateDir, '--config', agent.configFile]);
    assert.equal(cli.code, 1, cli.out);
    assert.match(cli.stderr, /delivery failed: the endpoint answered HTTP 500/);
  });

  test('absent receiver: last_error says the endpoint could not be reached, with the cause', async (t) => {
    const port = await closedPort();
    const agent = await startAgent({
      'alerter.url': `http://127.0.0.1:${port}/hook`,
      'alerter.retries': '1',
      'alerter.backoff_ms': '20',
    });
    t.after(() => agent.stop());
    await queueTests(agent, 2);
    const state = await eventually('both drops', async () => {
      const s = await alerterState(agent);
      return s.dropped === 2 ? s : undefined;
    });
    assert.deepEqual([state.queued, state.sent, state.dropped], [0, 0, 2]);
    assert.match(state.last_error!, /^could not reach the endpoint: connect ECONNREFUSED 127\.0\.0\.1:\d+$/);
  });

  test('alert-test without a daemon sends one event directly; without alerter.url it says so', async (t) => {
    const receiver = await startReceiver('ok');
    t.after(() => receiver.close());
    const agent = await startAgent({ 'alerter.url': receiver.url, 'alerter.secret': 's3cret-s3cret' });
    await agent.stop(); // removes the dir; write a fresh one below
    const { tempDir, writeConfig } = await import('./agent-process.js');
    const dir = tempDir();
    t.after(() => dir.remove());
    const conf = join(dir.path, 'a.conf');
    writeConfig(conf, { 'alerter.url': receiver.url, 'alerter.secret': 's3cret-s3cret' });
    const res = await runCli(['alert-test', '--state-dir', join(dir.path, 'st'), '--config', conf]);
    assert.equal(res.code, 0, res.out);
    assert.match(res.stdout, /test event delivered/);
    assert.equal(receiver.deliveries.length, 1);
    assert.ok(
      signatureValid(
        receiver.deliveries[0]!.headers['x-palisade-signature'],
        receiver.deliveries[0]!.body,
        's3cret-s3cret',
      ),
    );

    writeConfig(conf, { 'metrics.listen': '127.0.0.1:0' });
    const none = await runCli(['alert-test', '--state-dir', join(dir.path, 'st'), '--config', conf]);
    assert.equal(none.code, 1);
    assert.match(none.stderr, /alerter\.url is not set/);
  });
});
