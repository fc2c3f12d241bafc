import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { controlUrl } from '../src/features/protection/api/get-control';
import { addressRange, overlaps } from '../src/lib/address-range';

describe('lib/address-range: the both-lists warning', () => {
  test('an entry overlaps another when one holds the other, in either family', () => {
    assert.equal(overlaps('198.51.100.0/24', '198.51.100.7'), true);
    assert.equal(overlaps('198.51.100.7', '198.51.100.0/24'), true);
    assert.equal(overlaps('198.51.100.7', '198.51.100.7'), true);
    assert.equal(overlaps('198.51.100.0/25', '198.51.100.128/25'), false);
    assert.equal(overlaps('198.51.100.0/24', '198.51.101.1'), false);
    assert.equal(overlaps('2001:db8::/48', '2001:db8:0:1::5'), true);
    assert.equal(overlaps('2001:db8::/48', '2001:db9::1'), false);
    assert.equal(overlaps('::ffff:192.0.2.1', '::ffff:192.0.2.0/120'), true);
    assert.equal(overlaps('0.0.0.0/8', '::/8'), false, 'v4 and v6 never overlap');
  });

  test('anything but a canonical address or range is no range', () => {
    for (const bad of ['', '1.2.3', '1.2.3.256', '1.2.3.4/33', '1::2::3', 'x', '1.2.3.4/24/1'])
      assert.equal(addressRange(bad), null, bad);
    assert.deepEqual(addressRange('203.0.113.7/24'), { family: 4, first: 0xcb007100n, last: 0xcb0071ffn });
  });

  test('the lookup and feed-page queries are encoded into the proxy address', () => {
    assert.equal(
      controlUrl(3, 'blacklist', { ip: '2001:db8::1' }),
      '/api/servers/3/control?path=blacklist&ip=2001%3Adb8%3A%3A1',
    );
    assert.equal(
      controlUrl(3, 'blacklist', { source: 'feed:local', cursor: '192.0.2.0/24' }),
      '/api/servers/3/control?path=blacklist&source=feed%3Alocal&cursor=192.0.2.0%2F24',
    );
  });
});
