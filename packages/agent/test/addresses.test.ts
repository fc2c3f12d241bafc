// Addresses on a real daemon: only canonical dotted quads and canonical IPv6 are read, wherever an
// address or CIDR comes in (lists, config, feeds); ambiguous spellings such as `010.1.1.1` (octal
// to some parsers) or `1.2.3` are refused instead of reinterpreted. The blacklist refuses /0.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type AgentProcess, request, spawnAgent, startAgent, tempDir, writeConfig } from './agent-process.js';

const AMBIGUOUS = [
  '010.1.1.1',
  '1.2.3',
  '0x7f.1.1.1',
  '1.2.3.4.5',
  '127.1',
  '01.2.3.4',
  '1.2.3.04',
  '::ffff:010.1.1.1',
];

describe('strict addresses', () => {
  let agent: AgentProcess;
  const feed = http.createServer((_req, res) =>
    res.writeHead(200).end('# feed\n192.0.2.0/24\n010.0.0.1\n1.2.3\n198.51.100.7 ; ok\n0x7f.0.0.1\n0.0.0.0/0\n'),
  );
  const call = async (method: string, path: string, body?: unknown) => {
    const text = body === undefined ? '' : typeof body === 'string' ? body : JSON.stringify(body);
    return request(`${agent.url}/${path}`, {
      key: agent.key,
      method,
      headers: body === undefined ? {} : { 'content-length': String(Buffer.byteLength(text)) },
      ...(body === undefined ? {} : { body }),
    });
  };

  before(async () => {
    await new Promise<void>((r) => feed.listen(0, '127.0.0.1', () => r()));
    const feedUrl = `http://127.0.0.1:${(feed.address() as AddressInfo).port}/feed.txt`;
    agent = await startAgent({ 'autofetch.feeds': `local=${feedUrl}` });
  });
  after(async () => {
    await agent.stop();
    await new Promise((r) => feed.close(r));
  });

  test('whitelist and blacklist refuse ambiguous IPv4 spellings with 400 naming ip', async () => {
    for (const list of ['whitelist', 'blacklist', 'autofetch/never-add', 'autofetch/never-remove']) {
      for (const ip of [...AMBIGUOUS, '010.0.0.0/8', '10.0.0.0/08', '10.0.0.0/8/8', '2001:db8::/0129']) {
        const res = await call('POST', list, { ip });
        assert.equal(res.status, 400, `${list} ${ip}: ${res.body}`);
        assert.match(res.json.error, /^ip: /);
      }
      const del = await call('DELETE', `${list}?ip=010.1.1.1`);
      assert.equal(del.status, 400, `${list} DELETE: ${del.body}`);
      assert.match(del.json.error, /^ip: /);
    }
    assert.deepEqual((await call('GET', 'whitelist')).json.entries, []);
    assert.deepEqual((await call('GET', 'blacklist')).json.entries, []);
  });

  test('canonical IPv4 and IPv6 are still read, and imports count ambiguous lines as invalid', async () => {
    for (const ip of ['192.0.2.1', '198.51.100.0/24', '2001:db8::1', '2001:DB8:0:0::/64', '::ffff:203.0.113.5']) {
      const res = await call('POST', 'blacklist', { ip });
      assert.equal(res.status, 200, `${ip}: ${res.body}`);
    }
    const ips = (await call('GET', 'blacklist')).json.entries.map((e: { ip: string }) => e.ip).sort();
    assert.deepEqual(ips, ['192.0.2.1', '198.51.100.0/24', '2001:db8::/64', '2001:db8::1', '203.0.113.5']);
    const imported = await call('POST', 'whitelist/import', '192.0.2.50\n010.1.1.1\n1.2.3\n2001:db8::5\n');
    assert.equal(imported.json.added, 2, imported.body);
    assert.equal(imported.json.invalid, 2);
    await call('POST', 'blacklist/clear');
    await call('POST', 'whitelist/clear');
  });

  test('0.0.0.0/0 and ::/0 are refused on the blacklist: they would block everything', async () => {
    for (const ip of ['0.0.0.0/0', '::/0', '::ffff:0.0.0.0/96', '1.2.3.4/0']) {
      const res = await call('POST', 'blacklist', { ip });
      assert.equal(res.status, 400, `${ip}: ${res.body}`);
      assert.match(res.json.error, /^ip: .*would block everything/);
    }
    const imported = await call('POST', 'blacklist', ['0.0.0.0/0', '192.0.2.9']);
    assert.equal(imported.json.added, 1);
    assert.equal(imported.json.invalid, 1);
    assert.equal((await call('POST', 'autofetch/never-remove', { ip: '::/0' })).status, 400);
    await call('POST', 'blacklist/clear');
  });

  test('config: metrics.whitelist, host.public_ip and metrics.listen refuse ambiguous spellings', async () => {
    const before = readFileSync(agent.configFile, 'utf8');
    for (const [key, value] of [
      ['metrics.whitelist', '127.0.0.1, 010.0.0.5'],
      ['metrics.whitelist', ['127.0.0.1', '127.1']],
      ['host.public_ip', '010.0.0.5'],
      ['metrics.listen', '0127.0.0.1:9740'],
    ] as const) {
      const res = await call('POST', 'config', { [key]: value });
      assert.equal(res.status, 400, `${key}=${value}: ${res.body}`);
      assert.match(res.json.error, new RegExp(`${key.replace('.', '\\.')}.*not an IP address`));
    }
    assert.equal(readFileSync(agent.configFile, 'utf8'), before);
  });

  test('a feed line that is not canonical is counted invalid', async () => {
    assert.equal((await call('POST', 'autofetch/toggle', { enabled: true })).status, 200);
    const fetched = await call('POST', 'autofetch/fetch-now', { feed: 'local' });
    assert.equal(fetched.status, 200, fetched.body);
    const local = fetched.json.feeds.find((f: { name: string }) => f.name === 'local');
    assert.equal(local.last_error, null);
    assert.equal(local.entries, 2, 'only 192.0.2.0/24 and 198.51.100.7');
    assert.equal(local.invalid, 4, '010.0.0.1, 1.2.3, 0x7f.0.0.1 and 0.0.0.0/0');
  });
});

describe('a config file with an ambiguous metrics.whitelist', () => {
  test('is refused at start with the key and line', async () => {
    const dir = tempDir();
    try {
      const stateDir = join(dir.path, 'state');
      const configFile = join(dir.path, 'agent.conf');
      writeConfig(configFile, {
        'metrics.listen': '127.0.0.1:0',
        'protection.backend': 'monitor',
        'metrics.whitelist': '010.0.0.5',
      });
      const started = await spawnAgent(['run', '--config', configFile, '--state-dir', stateDir]);
      if (!('exitCode' in started)) {
        await started.stop();
        assert.fail('the agent started with metrics.whitelist = 010.0.0.5');
      }
      assert.notEqual(started.exitCode, 0);
      assert.match(started.out, /agent\.conf:3: bad value for metrics\.whitelist: "010\.0\.0\.5" is not an IP address/);
    } finally {
      dir.remove();
    }
  });
});
