import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, defaultConfig, parseConfig, parseListen } from '../src/config/config.js';
import { isInside, parseClientAddress, parseNetworkList } from '../src/lib/ip-ranges.js';

test('an empty file gives the defaults', () => {
  assert.deepEqual(parseConfig('# nothing\n\n', 'a.conf'), defaultConfig());
  const d = defaultConfig();
  assert.deepEqual(d.metrics.listen, { host: '0.0.0.0', port: 9740 });
  assert.equal(d.metrics.intervalMs, 2000);
  assert.equal(d.checkin.intervalS, 30);
  assert.equal(d.alerter.queueMax, 1000);
});

test('every documented key is read, with comments, quotes and spaces', () => {
  const c = parseConfig(
    [
      '# a comment',
      'metrics.listen = [::1]:9000',
      'metrics.whitelist = 10.0.0.0/8, 192.0.2.1 2001:db8::/32',
      'metrics.tls = on',
      'metrics.interval_s = 0.5',
      'metrics.history = 30',
      'metrics.collector_timeout_ms = 500',
      'host.public_ip = 203.0.113.9',
      'alerter.url = "https://hooks.example.com/palisade"',
      "alerter.secret = 'shh shh'",
      'alerter.queue_max = 50',
      'alerter.timeout_ms = 2000',
      'alerter.retries = 5',
      'alerter.backoff_ms = 250',
      'checkin.interval_s = 15',
      'checkin.timeout_ms = 3000',
      'console.link_heartbeat_ms = 2000',
      'protection.backend = monitor',
    ].join('\n'),
    'a.conf',
  );
  assert.deepEqual(c.metrics.listen, { host: '::1', port: 9000 });
  assert.deepEqual(
    c.metrics.whitelist.map((w) => w.text),
    ['10.0.0.0/8', '192.0.2.1', '2001:db8::/32'],
  );
  assert.equal(c.metrics.tls, true);
  assert.equal(c.metrics.intervalMs, 500);
  assert.equal(c.metrics.history, 30);
  assert.equal(c.metrics.collectorTimeoutMs, 500);
  assert.equal(c.host.publicIp, '203.0.113.9');
  assert.equal(c.alerter.url, 'https://hooks.example.com/palisade');
  assert.equal(c.alerter.secret, 'shh shh');
  assert.deepEqual(
    [c.alerter.queueMax, c.alerter.timeoutMs, c.alerter.retries, c.alerter.backoffMs],
    [50, 2000, 5, 250],
  );
  assert.deepEqual([c.checkin.intervalS, c.checkin.timeoutMs], [15, 3000]);
  assert.equal(c.console.linkHeartbeatMs, 2000);
  assert.equal(c.protection.backend, 'monitor');
});

test('unknown keys, bad values, duplicates and junk lines are all reported with file and line', () => {
  const text = [
    'metrics.listen = 127.0.0.1:99999',
    'metrics.listn = 1',
    'alerter.queue_max = -3',
    'just words',
    'metrics.listen = 127.0.0.1:1',
    'alerter.url = mailto:x@example.com',
    'metrics.whitelist = 10.0.0.300',
    'metrics.tls = maybe',
    'console.link_heartbeat_ms = 400',
  ].join('\n');
  let error: ConfigError | undefined;
  try {
    parseConfig(text, '/etc/palisade-agent/agent.conf');
  } catch (err) {
    error = err as ConfigError;
  }
  assert.ok(error instanceof ConfigError);
  assert.deepEqual(
    error.problems.map((p) => p.line),
    [1, 2, 3, 4, 5, 6, 7, 8, 9],
  );
  const lines = error.message.split('\n');
  assert.equal(
    lines[0],
    '/etc/palisade-agent/agent.conf:1: bad value for metrics.listen: port must be from 0 to 65535',
  );
  assert.match(
    lines[1]!,
    /^\/etc\/palisade-agent\/agent\.conf:2: unknown key "metrics\.listn" \(known metrics\.\* keys: /,
  );
  assert.match(lines[2]!, /:3: bad value for alerter\.queue_max: expected a whole number from 1 to 100000$/);
  assert.match(lines[3]!, /:4: expected "key = value"/);
  assert.match(lines[4]!, /:5: "metrics\.listen" is already set on line 1$/);
  assert.match(lines[5]!, /:6: bad value for alerter\.url: expected an http/);
  assert.match(lines[6]!, /:7: bad value for metrics\.whitelist: "10\.0\.0\.300" is not an IP address or CIDR range$/);
  assert.match(lines[7]!, /:8: bad value for metrics\.tls: expected on or off$/);
  assert.match(lines[8]!, /:9: bad value for console\.link_heartbeat_ms: expected a whole number from 500 to 10000$/);
});

test('listen addresses', () => {
  assert.deepEqual(parseListen('9740'), { host: '0.0.0.0', port: 9740 });
  assert.deepEqual(parseListen(':9740'), { host: '0.0.0.0', port: 9740 });
  assert.deepEqual(parseListen('[::]:0'), { host: '::', port: 0 });
  assert.deepEqual(parseListen('localhost:1'), { host: 'localhost', port: 1 });
  assert.throws(() => parseListen('example.com:80'), /expected host:port/);
  assert.throws(() => parseListen('::1:80'), /expected host:port/);
});

test('whitelist matching: v4, v6, CIDRs and IPv4-mapped addresses', () => {
  const list = parseNetworkList('10.0.0.0/8,192.0.2.7,2001:db8::/32,::ffff:172.16.0.0/108');
  const inside = (a: string) => isInside(parseClientAddress(a)!, list);
  assert.ok(inside('10.1.2.3'));
  assert.ok(inside('::ffff:10.1.2.3'));
  assert.ok(inside('192.0.2.7'));
  assert.ok(!inside('192.0.2.8'));
  assert.ok(inside('2001:db8:1::5'));
  assert.ok(!inside('2001:db9::5'));
  assert.ok(inside('172.16.3.4'), 'a mapped v6 range also matches plain v4 clients');
  assert.ok(inside('172.31.0.1'), '/108 is 172.16.0.0/12');
  assert.ok(!inside('172.32.0.1'));
  assert.ok(!inside('127.0.0.1'));
  assert.equal(parseClientAddress('not an ip'), null);
  assert.equal(parseClientAddress('fe80::1%eth0')?.text, 'fe80::1');
});

test('the shipped example file parses and says what the defaults are; the packaged unit runs it', async () => {
  const { readFileSync } = await import('node:fs');
  const { fileURLToPath } = await import('node:url');
  const file = fileURLToPath(new URL('../../examples/agent.conf', import.meta.url));
  const parsed = parseConfig(readFileSync(file, 'utf8'), file);
  assert.deepEqual(parsed, defaultConfig());
  const unit = readFileSync(fileURLToPath(new URL('../../packaging/palisade-agent.service', import.meta.url)), 'utf8');
  assert.match(
    unit,
    /^ExecStart=.*palisade-agent run --config \/etc\/palisade-agent\/agent\.conf --state-dir \/var\/lib\/palisade-agent$/m,
  );
  assert.match(unit, /^ExecReload=\/bin\/kill -HUP \$MAINPID$/m);
});
