// Parsing and decisions of the protection engine, without processes or a firewall.
import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { editConfigText } from '../src/config/protection-file.js';
import { contains, NetworkSet, parseNetwork, sharedPrefix } from '../src/lib/net.js';
import { parseFeed } from '../src/protection/feeds.js';
import { FileTail } from '../src/protection/file-tail.js';
import { chainRules, disjoint, elementOf, tableScript } from '../src/protection/firewall.js';
import { parseCountry } from '../src/protection/geo.js';
import { IpList, importItems } from '../src/protection/lists.js';
import { HitCounter, parsePatternInput } from '../src/protection/log-patterns.js';
import { countSockets, decodeAddress } from '../src/protection/sockets.js';
import { StateStore } from '../src/protection/store.js';
import { Baseline, hourOfWeek, parseNetDev, robustStats } from '../src/protection/traffic.js';

describe('addresses', () => {
  test('IPs and CIDRs are normalized; bad ones are refused with the reason', () => {
    assert.equal(parseNetwork('198.51.100.7/24').text, '198.51.100.0/24');
    assert.equal(parseNetwork(' 2001:DB8::1 ').text, '2001:db8::1');
    assert.equal(parseNetwork('::ffff:192.0.2.1').text, '192.0.2.1');
    assert.equal(parseNetwork('2001:db8:1:2:3::/64').text, '2001:db8:1:2::/64');
    for (const bad of ['1.2.3.256', '1.2.3.4/33', 'abc', '', '2001:db8::/129', 42])
      assert.throws(() => parseNetwork(bad), /ip: /);
  });

  test('containment and lookup across prefix lengths', () => {
    const set = new NetworkSet(['10.0.0.0/8', '192.0.2.7', '2001:db8::/32'].map(parseNetwork));
    assert.equal(set.find(parseNetwork('10.9.8.7'))?.text, '10.0.0.0/8');
    assert.equal(set.find(parseNetwork('192.0.2.7'))?.text, '192.0.2.7');
    assert.equal(set.find(parseNetwork('192.0.2.8')), null);
    assert.equal(set.find(parseNetwork('2001:db8:ffff::1'))?.text, '2001:db8::/32');
    assert.ok(contains(parseNetwork('10.0.0.0/8'), parseNetwork('10.1.0.0/16')));
    assert.equal(sharedPrefix(parseNetwork('203.0.113.77')).text, '203.0.113.0/24');
    assert.equal(sharedPrefix(parseNetwork('2001:db8:1:2:3:4:5:6')).text, '2001:db8:1:2::/64');
  });
});

describe('lists', () => {
  test('add, import, remove, expiry and persistence', () => {
    const dir = mkdtempSync(join(tmpdir(), 'palisade-lists-'));
    try {
      const file = new StateStore(dir).json('blacklist.json', { entries: [] });
      const list = new IpList('blacklist', file);
      assert.equal(list.add({ net: parseNetwork('192.0.2.1'), note: 'x', ttl_s: 10 }, 'manual', 1000).added, true);
      assert.equal(list.add({ net: parseNetwork('192.0.2.1') }, 'manual', 2000).added, false);
      const r = list.import(
        importItems('198.51.100.0/24 # a net\n; comment\nnope\n192.0.2.1\n2001:db8::1'),
        'import',
        3000,
      );
      assert.deepEqual(
        { ...r, invalid_examples: undefined },
        { added: 2, skipped: 1, invalid: 1, invalid_examples: undefined },
      );
      assert.equal(list.covering(parseNetwork('198.51.100.9'))?.text, '198.51.100.0/24');
      list.flush();
      const again = new IpList('blacklist', file);
      assert.equal(again.size, 3);
      assert.equal(again.expire(1_000_000).length, 0, 'the re-added entry lost its ttl');
      assert.ok(again.remove(parseNetwork('2001:db8::1')));
      assert.equal(again.clear('import'), 1);
      assert.equal(again.size, 1);
      // Writes the pending save now: its timer would otherwise fire after the directory is gone.
      again.flush();
      const timed = new IpList('t', null);
      timed.add({ net: parseNetwork('192.0.2.9'), ttl_s: 5 }, 'attack', 0);
      assert.equal(timed.expire(5000).length, 1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a JSON array may hold strings or {ip, note, ttl_s} objects; bad fields are invalid', () => {
    const list = new IpList('w', null);
    const r = list.import(
      ['192.0.2.1', { ip: '192.0.2.2', note: 'n' }, { ip: '192.0.2.3', ttl_s: -1 }, { ip: 'x' }, 7],
      'import',
      0,
    );
    assert.equal(r.added, 2);
    assert.equal(r.invalid, 3);
  });
});

describe('socket tables', () => {
  const tcp = [
    '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode',
    '   0: 00000000:0016 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1',
    '   1: 0100000A:0016 0200000A:D431 01 00000000:00000000 00:00000000 00000000     0        0 2',
    '   2: 0100000A:1F90 0300000A:D432 01 00000000:00000000 00:00000000 00000000     0        0 3',
    '   3: 0100000A:1F90 0300000A:D433 03 00000000:00000000 00:00000000 00000000     0        0 4',
    '   4: 0100000A:C350 0400000A:01BB 01 00000000:00000000 00:00000000 00000000     0        0 5',
    '   5: 00000000:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 6',
  ].join('\n');
  const tcp6 = [
    '  sl  local_address                         remote_address                        st',
    '   0: 00000000000000000000000000000000:1F90 00000000000000000000000000000000:0000 0A',
    '   1: 00000000000000000000000001000000:1F90 0000000000000000FFFF00000500000A:D434 01',
    '   2: 00000000000000000000000001000000:1F90 B80D0120000000000000000001000000:D435 01',
  ].join('\n');

  test('addresses decode from the kernel byte order', () => {
    assert.deepEqual(decodeAddress('0100007F:1F90'), { ip: '127.0.0.1', port: 8080 });
    assert.deepEqual(decodeAddress('B80D0120000000000000000001000000:0050'), { ip: '2001:db8::1', port: 80 });
  });

  test('incoming connections per source; outgoing ones and listeners left out; SSH peers named', () => {
    const t = countSockets([tcp, tcp6], [22]);
    assert.deepEqual(t.sources.get('10.0.0.3'), { established: 1, synRecv: 1 });
    assert.deepEqual(t.sources.get('10.0.0.2'), { established: 1, synRecv: 0 });
    assert.deepEqual(t.sources.get('10.0.0.5'), { established: 1, synRecv: 0 }, 'v4-mapped v6 counts as v4');
    assert.deepEqual(t.sources.get('2001:db8::1'), { established: 1, synRecv: 0 });
    assert.equal(t.sources.has('10.0.0.4'), false, 'outgoing connection');
    assert.deepEqual([...t.sshPeers], ['10.0.0.2']);
  });
});

describe('nftables script', () => {
  test('the whitelist comes first, explicit bans before established traffic, feeds and geo after', () => {
    const rules = chainRules('allow');
    assert.match(rules[1]!, /@allow_v4 .*accept/);
    const est = rules.findIndex((r) => r.startsWith('ct state'));
    assert.ok(rules.findIndex((r) => r.includes('@attack_v4')) < est);
    assert.ok(rules.findIndex((r) => r.includes('@feed_v4')) > est);
    assert.match(rules.at(-1)!, /saddr != @geo_v6 .* drop/);
    assert.equal(
      chainRules('off').some((r) => r.includes('geo')),
      false,
    );
  });

  test('overlapping elements are merged; timeouts are written in seconds', () => {
    const els = disjoint([
      elementOf(parseNetwork('192.0.2.0/24')),
      elementOf(parseNetwork('192.0.2.9')),
      elementOf(parseNetwork('198.51.100.1'), 61_000),
    ]);
    assert.equal(els.length, 2);
    const script = tableScript(
      { geoMode: 'off', sets: { allow: [], manual: [], attack: els, feed: [], geo: [] } },
      1000,
    );
    assert.match(
      script,
      /add element inet palisade attack_v4 \{ 192\.0\.2\.0-192\.0\.2\.255, 198\.51\.100\.1 timeout 60s \}/,
    );
    assert.match(script, /^table inet palisade \{\}\ndelete table inet palisade\n/);
  });
});

describe('log patterns', () => {
  test('validation names the bad field', () => {
    assert.throws(() => parsePatternInput({ name: 'x', file: '/a', regex: '(' }), /regex: not a valid/);
    assert.throws(() => parsePatternInput({ name: 'x', file: '/a', regex: 'from (\\S+)' }), /\(\?<ip>/);
    assert.throws(() => parsePatternInput({ name: 'x', file: 'rel', regex: '(?<ip>.)' }), /file:/);
    assert.throws(
      () => parsePatternInput({ name: 'x', file: '/a', regex: '(?<ip>.)', threshold: 0, window_s: 1, ban_s: 1 }),
      /threshold/,
    );
    assert.equal(parsePatternInput({ name: 'sshd', threshold: 2 }).threshold, 2);
  });

  test('hits in a window reach the threshold once', () => {
    const c = new HitCounter();
    assert.equal(c.hit('a', 0, 1000, 3), false);
    assert.equal(c.hit('a', 500, 1000, 3), false);
    assert.equal(c.hit('a', 1200, 1000, 3), false, 'the first hit left the window');
    assert.equal(c.hit('a', 1300, 1000, 3), true);
    assert.equal(c.hit('a', 1400, 1000, 3), false, 'counting starts again after a ban');
  });

  test('tailing follows appends, truncation and rotation', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'palisade-tail-'));
    try {
      const file = join(dir, 'app.log');
      writeFileSync(file, 'old line\n');
      const tail = new FileTail(file);
      assert.deepEqual(await tail.poll(), [], 'an existing file is read from its end');
      appendFileSync(file, 'one\ntw');
      assert.deepEqual(await tail.poll(), ['one']);
      appendFileSync(file, 'o\n');
      assert.deepEqual(await tail.poll(), ['two']);
      writeFileSync(file, 'after truncate\n');
      assert.deepEqual(await tail.poll(), ['after truncate']);
      appendFileSync(file, 'last of old\n');
      renameSync(file, `${file}.1`);
      writeFileSync(file, 'first of new\n');
      assert.deepEqual(await tail.poll(), ['last of old', 'first of new']);
      rmSync(file);
      assert.deepEqual(await tail.poll(), []);
      assert.match(tail.error ?? '', /ENOENT/);
      tail.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('traffic baseline', () => {
  test('median and MAD ignore outliers', () => {
    const s = robustStats([10, 11, 9, 10, 12, 10, 1_000_000]);
    assert.equal(s.median, 10);
    assert.ok(s.spread < 3);
  });

  test('learns per hour of week; export and import round-trip; bad imports are refused', () => {
    const b = new Baseline();
    const monday = Date.UTC(2026, 2, 2, 10, 0, 0);
    assert.equal(hourOfWeek(monday), 10);
    for (let m = 0; m < 40; m++) b.learn('eth0', monday + m * 60_000, 100 + (m % 3), 8000);
    const limit = b.limit('eth0', monday, 'pps', 6);
    assert.ok(limit !== null && limit > 101 && limit < 200, String(limit));
    const copy = new Baseline();
    copy.import(JSON.parse(JSON.stringify(b.export())));
    assert.equal(copy.limit('eth0', monday, 'pps', 6), limit);
    assert.throws(() => copy.import({ version: 2 }), /^Error: version: expected 1/);
    assert.throws(() => copy.import({ version: 1, interfaces: { eth0: { pps: [], bps: [] } } }), /168/);
    assert.equal(parseNetDev('h1\nh2\n  lo: 1 2 0 0\n eth0: 1000 20 0 0 0 0 0 0 500 5\n').get('eth0')?.rxPackets, 20);
  });
});

describe('feeds, geo and config edits', () => {
  test('FireHOL and Spamhaus formats', () => {
    const r = parseFeed('# firehol\n1.2.3.0/24\n5.6.7.8\n\n; Spamhaus DROP\n192.0.2.0/24 ; SBL123\nbogus\n');
    assert.deepEqual(
      r.networks.map((n) => n.text),
      ['1.2.3.0/24', '5.6.7.8', '192.0.2.0/24'],
    );
    assert.equal(r.invalid, 1);
  });

  test('countries are ISO codes; unknown ones are refused', () => {
    assert.equal(parseCountry('de'), 'DE');
    assert.equal(parseCountry('XK'), 'XK');
    for (const bad of ['ZZ', 'XX', 'EU', 'DEU', '1']) assert.throws(() => parseCountry(bad), /country/);
  });

  test('config edits replace, append and remove lines and keep comments', () => {
    const text = '# mine\nmetrics.listen = 127.0.0.1:1\nprotection.conn_limit = 5\n';
    assert.equal(
      editConfigText(text, { 'protection.conn_limit': '50', 'protection.ban_s': '60', 'metrics.listen': null }),
      '# mine\nprotection.conn_limit = 50\nprotection.ban_s = 60\n',
    );
  });
});
