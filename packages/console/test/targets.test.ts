import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { generateToken } from '@palisade/protocol';
import { checkAddress } from '../src/outbound/target-policy.js';
import { rawRequest } from './http.js';
import { dialects, registerUser, type TestApp, type TestUser, testApp } from './support.js';

/** Agent addresses that must never be called with private targets off (some never at all). */
const REFUSED: [url: string, alwaysRefused: boolean][] = [
  ['http://[::7f00:1]:9100/', true], // IPv4-compatible ::/96 carrying 127.0.0.1
  ['http://[::a9fe:a9fe]/', true], // ... carrying the metadata address
  ['http://[::a00:1]:9100/', true], // ... carrying 10.0.0.1
  ['http://[::808:808]:9100/', true], // ... even a public IPv4: the form is deprecated
  ['http://168.63.129.16/', true], // Azure host endpoint (wire server)
  ['http://[::ffff:7f00:1]:9100/', false], // IPv4-mapped
  ['http://[::ffff:0:7f00:1]:9100/', true], // IPv4-translated (SIIT)
  ['http://[64:ff9b::a00:1]:9100/', true], // NAT64 with a private IPv4 inside
  ['http://[64:ff9b::7f00:1]:9100/', true],
  ['http://100.64.0.1:9100/', false], // CGNAT
  ['http://169.254.10.10:9100/', true], // link-local
  ['http://[fd00::1]:9100/', false], // unique local
  ['http://[fe80::1]:9100/', true], // link-local
  ['http://0.1.2.3:9100/', true], // 0.0.0.0/8
];

for (const dialect of dialects()) {
  for (const allowPrivate of [false, true]) {
    describe(`agent address policy over HTTP, private targets ${allowPrivate ? 'on' : 'off'} (${dialect})`, () => {
      let t: TestApp;
      let port: number;
      let user: TestUser;
      before(async () => {
        t = await testApp(dialect, { PALISADE_ALLOW_PRIVATE_TARGETS: allowPrivate ? '1' : '0' });
        await t.app.listen({ host: '127.0.0.1', port: 0 });
        port = (t.app.server.address() as AddressInfo).port;
        user = await registerUser(t.app);
      });
      after(() => t.close());

      const post = (path: string, body: unknown) =>
        rawRequest(
          port,
          'POST',
          path,
          { cookie: user.cookie, 'content-type': 'application/json' },
          JSON.stringify(body),
        );

      test('POST /api/servers/test answers the refusal for every forbidden spelling', async () => {
        for (const [url, always] of REFUSED) {
          if (allowPrivate && !always) continue;
          const res = await post('/api/servers/test', { api_url: url, api_key: generateToken('agentKey') });
          assert.equal(res.status, 200, `${url}: ${res.body}`);
          const { data } = JSON.parse(res.body);
          assert.equal(data.reachable, false, url);
          assert.match(data.error, /forbidden address: /, `${url}: ${data.error}`);
        }
      });

      test('POST /api/servers refuses an IPv4-compatible address with 400 naming api_url', async () => {
        const product =
          (await t.app.services.catalog.products(user.id))[0] ?? (await t.app.services.catalog.addProduct(user.id, 1));
        const res = await post('/api/servers', {
          product_id: product.id,
          name: 'compat',
          api_url: 'http://[::7f00:1]:9100',
          api_key: generateToken('agentKey'),
        });
        assert.equal(res.status, 400, res.body);
        assert.match(JSON.parse(res.body).error, /^api_url: forbidden address: .*IPv4-compatible/);
      });
    });
  }
}

test('an IPv4-compatible address in dotted form (as glibc prints DNS answers) is refused, not read as mapped', () => {
  for (const address of ['::127.0.0.1', '::10.0.0.1', '0:0:0:0:0:0:169.254.169.254']) {
    assert.equal(checkAddress(address, true).ok, false, address);
    assert.match((checkAddress(address, false) as { reason: string }).reason, /IPv4-compatible/, address);
  }
  assert.equal(checkAddress('::ffff:127.0.0.1', true).ok, true, 'mapped loopback stays a private target');
  assert.equal(checkAddress('::1', true).ok, true);
});
