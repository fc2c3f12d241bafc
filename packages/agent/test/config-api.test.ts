// `GET/POST /config` on a real daemon: values cannot smuggle extra lines into the file, secrets
// never leave the agent, and the file the agent writes is readable by its owner only.
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { controlRequest } from '../src/api/control-socket.js';
import { type AgentProcess, eventually, request, signatureValid, startAgent, startReceiver } from './agent-process.js';

describe('POST /config', () => {
  let agent: AgentProcess;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  const secret = 'old-shared-secret-4711';
  const call = (method: string, path: string, body?: unknown) =>
    request(`${agent.url}/${path}`, { key: agent.key, method, ...(body === undefined ? {} : { body }) });

  before(async () => {
    receiver = await startReceiver('ok');
    agent = await startAgent({ 'alerter.url': receiver.url, 'alerter.secret': secret });
  });
  after(async () => {
    await agent.stop();
    await receiver.close();
  });

  test('a control character in any value, list items included, is refused naming the key; nothing is written', async () => {
    const before = readFileSync(agent.configFile, 'utf8');
    const cases: [string, unknown][] = [
      ['metrics.whitelist', ['127.0.0.1', '127.0.0.2\nalerter.url = http://127.0.0.1:1/evil']],
      ['protection.ssh_ports', [22, '2222\r\nprotection.conn_limit = 2']],
      ['alerter.secret', 'abc\ndef'],
      ['alerter.secret', 'abc\u0000def'],
      ['autofetch.feeds', 'a=https://example.com/a\tb=https://example.com/b'],
      ['alerter.url', 'https://example.com/\u007f'],
    ];
    for (const [key, value] of cases) {
      const res = await call('POST', 'config', { 'protection.conn_limit': 150, [key]: value });
      assert.equal(res.status, 400, `${key}: ${res.body}`);
      assert.match(res.json.error, new RegExp(`^${key.replace('.', '\\.')}: .*control character`));
    }
    assert.equal(readFileSync(agent.configFile, 'utf8'), before, 'the config file is unchanged');
    assert.equal((await call('GET', 'config')).json.protection.connLimit, 100);
  });

  test('GET /config masks secrets, and posting the masked answer back keeps the stored secret', async () => {
    const read = await call('GET', 'config');
    assert.equal(read.status, 200);
    assert.ok(!read.body.includes(secret), 'the secret is not in the answer');
    assert.equal(read.json.values['alerter.secret'], '********');
    assert.equal(read.json.values['alerter.url'], receiver.url);

    const back = await call('POST', 'config', { ...read.json.values, 'protection.conn_limit': 175 });
    assert.equal(back.status, 200, back.body);
    assert.ok(!back.body.includes(secret));
    assert.match(readFileSync(agent.configFile, 'utf8'), new RegExp(`^alerter\\.secret = ${secret}$`, 'm'));
    assert.equal((await call('GET', 'config')).json.protection.connLimit, 175);

    // The reloaded alerter still signs with the stored secret.
    await controlRequest(join(agent.stateDir, 'agent.sock'), 'POST', '/alert-test?count=1');
    const delivery = await eventually('the test event', () => receiver.deliveries[0]);
    assert.ok(signatureValid(delivery.headers['x-palisade-signature'], delivery.body, secret));

    // A new secret replaces the old one; the answer masks it too.
    const changed = await call('POST', 'config', { 'alerter.secret': 'new-secret-0815' });
    assert.equal(changed.status, 200, changed.body);
    const again = await call('GET', 'config');
    assert.ok(!again.body.includes('new-secret-0815'));
    assert.equal(again.json.values['alerter.secret'], '********');
    assert.match(readFileSync(agent.configFile, 'utf8'), /^alerter\.secret = new-secret-0815$/m);
  });

  test('the config file the agent writes is 0600', async () => {
    assert.equal((await call('POST', 'config', { 'protection.conn_limit': 180 })).status, 200);
    assert.equal(statSync(agent.configFile).mode & 0o777, 0o600);
  });
});
