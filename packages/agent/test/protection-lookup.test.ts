// "Why is this address blocked?" against a real daemon (monitor-only): `GET blacklist?ip=` names every
// source holding an address (list entries, an attack ban, a feed served over HTTP, the geo rule) and
// what the firewall does with it; `GET blacklist?source=feed:<name>` pages through a feed.
import assert from 'node:assert/strict';
import { appendFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type AgentProcess, eventually, startAgent } from './agent-process.js';
import { controlCaller } from './control-contract.js';

/** 256 single addresses, a /24 and a v6 range: more than two pages of 100. */
const FEED_LINES = [
  '# a test feed',
  '192.0.2.0/24 ; a range',
  '2001:db8::/48',
  ...Array.from({ length: 256 }, (_, i) => `203.0.113.${255 - i}`),
];

describe('GET blacklist?ip= and ?source=feed: (monitor-only backend)', () => {
  let agent: AgentProcess;
  const feedServer = http.createServer((_req, res) => res.writeHead(200).end(`${FEED_LINES.join('\n')}\n`));

  const call = controlCaller(() => agent);
  // biome-ignore lint/suspicious/noExplicitAny: answer fields
  const lookUp = async (ip: string): Promise<any> => {
    const r = await call('GET', `blacklist?ip=${encodeURIComponent(ip)}`);
    assert.equal(r.status, 200, r.body);
    return r.json;
  };
  // biome-ignore lint/suspicious/noExplicitAny: answer fields
  const kinds = (answer: any) => answer.holders.map((h: any) => `${h.kind}:${h.range}:${h.effect}`);

  before(async () => {
    await new Promise<void>((r) => feedServer.listen(0, '127.0.0.1', () => r()));
    const port = (feedServer.address() as AddressInfo).port;
    agent = await startAgent({
      'autofetch.feeds': `local=http://127.0.0.1:${port}/feed.txt`,
      'protection.check_interval_ms': '200',
    });
    assert.equal((await call('POST', 'autofetch/toggle', { enabled: true })).status, 200);
    assert.equal((await call('POST', 'autofetch/fetch-now')).json.feeds[0].entries, FEED_LINES.length - 1);
  });
  after(async () => {
    await agent.stop();
    await new Promise((r) => feedServer.close(r));
  });

  test('a manual entry: which entry, its note, and that monitor-only blocks nothing', async () => {
    await call('POST', 'blacklist', { ip: '198.51.100.0/24', note: 'scanner' });
    const answer = await lookUp('198.51.100.20');
    assert.equal(answer.ip, '198.51.100.20');
    assert.equal(answer.verdict, 'drop');
    assert.equal(answer.decided_by, 'blacklist');
    assert.deepEqual(kinds(answer), ['blacklist:198.51.100.0/24:drop']);
    assert.equal(answer.holders[0].entry.source, 'manual');
    assert.equal(answer.holders[0].entry.note, 'scanner');
    assert.deepEqual(answer.enforcement, { backend: 'monitor', reason: 'protection.backend = monitor' });
    assert.match(
      answer.summary,
      /^Blocked: on the blacklist as 198\.51\.100\.0\/24 .*Monitor-only: this server blocks nothing/,
    );
    const config = await call('GET', 'config');
    assert.deepEqual(config.json.enforcement, answer.enforcement, 'the dashboard finds the mode in config too');
  });

  test('an address on both lists: the whitelist wins, and the answer says so', async () => {
    await call('POST', 'whitelist', { ip: '198.51.100.7', note: 'office' });
    const answer = await lookUp('198.51.100.7');
    assert.equal(answer.verdict, 'accept');
    assert.equal(answer.decided_by, 'whitelist');
    assert.equal(answer.on_both_lists, true);
    assert.deepEqual(kinds(answer), ['whitelist:198.51.100.7:accept', 'blacklist:198.51.100.0/24:none']);
    assert.match(answer.holders[1].detail, /not reached: the whitelist rule comes first/);
    assert.equal((await lookUp('198.51.100.8')).on_both_lists, false);
  });

  test('a feed entry by the feed name; never-add takes out only what it covers whole', async () => {
    let answer = await lookUp('192.0.2.55');
    assert.deepEqual(kinds(answer), ['feed:192.0.2.0/24:drop']);
    assert.equal(answer.holders[0].feed, 'local');
    assert.equal(
      answer.summary,
      'Blocked: feed local lists 192.0.2.0/24. Monitor-only: this server blocks nothing; that is what nftables would do.',
    );
    // A never-add entry inside the range does not take the range out of the feed set (the firewall
    // drops whole elements), so the feed still blocks the address; one covering the range does.
    await call('POST', 'autofetch/never-add', { ip: '192.0.2.55' });
    answer = await lookUp('192.0.2.55');
    assert.deepEqual(kinds(answer), ['never-add:192.0.2.55:none', 'feed:192.0.2.0/24:drop']);
    assert.match(
      answer.holders[0].detail,
      /covers only part of the feed range, so local \(192\.0\.2\.0\/24\) still blocks it/,
    );
    await call('POST', 'autofetch/never-add', { ip: '192.0.2.0/23' });
    answer = await lookUp('192.0.2.55');
    assert.equal(answer.verdict, 'accept');
    assert.deepEqual(kinds(answer), [
      'never-add:192.0.2.55:none',
      'never-add:192.0.2.0/23:none',
      'feed:192.0.2.0/24:none',
    ]);
    assert.match(answer.holders[2].detail, /192\.0\.2\.0\/23 \(never-add or whitelist\) takes the range out/);
    const v6 = await lookUp('2001:db8::1');
    assert.deepEqual(kinds(v6), ['feed:2001:db8::/48:drop']);
    await call('POST', 'autofetch/toggle', { feed: 'local', enabled: false });
    assert.match((await lookUp('2001:db8::1')).holders[0].detail, /that feed is turned off/);
    await call('POST', 'autofetch/toggle', { feed: 'local', enabled: true });
  });

  test('an attack ban from a log pattern is an attack entry', async () => {
    const log = join(agent.dir, 'app.log');
    writeFileSync(log, '');
    const added = await call('POST', 'block-pattern', {
      name: 'app',
      file: log,
      regex: 'denied for (?<ip>\\S+)',
      threshold: 1,
      window_s: 60,
      ban_s: 600,
    });
    assert.equal(added.status, 200, added.body);
    await eventually('the pattern to ban 100.64.9.9', async () => {
      appendFileSync(log, 'denied for 100.64.9.9\n');
      return (await lookUp('100.64.9.9')).holders[0]?.entry?.source === 'attack' ? true : undefined;
    });
    const answer = await lookUp('100.64.9.9');
    assert.equal(answer.verdict, 'drop');
    assert.match(answer.holders[0].detail, /banned for an attack/);
  });

  test('the geo rule names the country holding the address', async () => {
    await call('POST', 'geo/mode', { mode: 'deny', countries: ['IS'] });
    // 5.23.64.0-5.23.95.255 is Iceland in @ip-location-db/geo-whois-asn-country.
    const denied = await lookUp('5.23.64.10');
    assert.equal(denied.verdict, 'drop');
    assert.equal(denied.holders[0].kind, 'geo');
    assert.equal(denied.holders[0].country, 'IS');
    assert.equal(denied.holders[0].range, '5.23.64.0-5.23.95.255');
    await call('POST', 'geo/mode', { mode: 'allow', countries: ['IS'] });
    const outside = await lookUp('8.8.8.8');
    assert.equal(outside.verdict, 'drop');
    assert.match(outside.holders[0].detail, /in none of the allowed countries \(IS\)/);
    assert.equal((await lookUp('10.1.2.3')).verdict, 'accept', 'private ranges pass allow mode');
    await call('POST', 'geo/mode', { mode: 'off' });
    const nothing = await lookUp('8.8.8.8');
    assert.deepEqual(nothing.holders, []);
    assert.equal(nothing.decided_by, null);
    assert.match(nothing.summary, /^Not blocked: no list, feed or geo rule holds it\./);
    const loop = await lookUp('127.0.0.1');
    assert.deepEqual(kinds(loop), ['loopback:null:accept']);
  });

  test('a feed pages in address order with a cursor, and the total', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const r = await call(
        'GET',
        `blacklist?source=feed:local&limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      );
      assert.equal(r.status, 200, r.body);
      assert.equal(r.json.total, FEED_LINES.length - 1);
      assert.ok(r.json.entries.length <= 100);
      seen.push(...r.json.entries);
      cursor = r.json.next_cursor;
      pages++;
    } while (cursor && pages < 10);
    assert.equal(pages, 3);
    assert.equal(seen.length, FEED_LINES.length - 1);
    assert.equal(new Set(seen).size, seen.length, 'no entry twice');
    assert.deepEqual(seen.slice(0, 3), ['192.0.2.0/24', '203.0.113.0', '203.0.113.1']);
    assert.equal(seen.at(-1), '2001:db8::/48', 'v4 first, then v6');
    const first = await call('GET', 'blacklist?source=feed:local');
    assert.equal(first.json.entries.length, 100, 'a page is 100 by default');
  });

  test('without the new parameters the answer is the plain list; bad parameters are 400s naming them', async () => {
    const plain = await call('GET', 'blacklist');
    assert.deepEqual(Object.keys(plain.json), ['entries']);
    assert.deepEqual((await call('GET', 'blacklist?unknown=1')).json, plain.json);
    const cases: [string, RegExp][] = [
      ['ip=010.1.1.1', /^ip: "010\.1\.1\.1" is not an IP address/],
      ['ip=198.51.100.0/24', /^ip: "198\.51\.100\.0\/24" is a range; expected one address/],
      ['ip=', /^ip: "" is not an IP address/],
      ['ip=1.2.3.4&ip=5.6.7.8', /^ip: given more than once/],
      ['ip=1.2.3.4&source=feed:local', /^ip: give either \?ip= or \?source=feed:<name>, not both/],
      ['source=feed:nope', /^source: unknown feed "nope" \(known: local\)/],
      ['source=local', /^source: expected feed:<name>/],
      ['source=feed:local&cursor=zzz', /^cursor: expected the next_cursor of the previous page/],
      ['source=feed:local&limit=0', /^limit: expected a whole number from 1 to 1000/],
      ['source=feed:local&limit=1001', /^limit: expected a whole number from 1 to 1000/],
      ['source=feed:local&limit=1e2', /^limit: expected a whole number from 1 to 1000/],
      ['cursor=192.0.2.0', /^cursor: cursor and limit page through \?source=feed:<name> only/],
    ];
    for (const [query, error] of cases) {
      const r = await call('GET', `blacklist?${query}`);
      assert.equal(r.status, 400, `${query}: ${r.body}`);
      assert.match(r.json.error, error, query);
    }
  });
});
