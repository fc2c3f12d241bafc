// `GET/POST /config` on a real daemon: values cannot smuggle extra lines into the file, secrets
// never leave the agent, and the file the agent writes is readable by its owner only.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { type AgentProcess, request, startAgent, startReceiver } from './agent-process.js';

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
});
