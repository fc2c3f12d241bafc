import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { generateToken } from '@palisade/protocol';
import { openApiMismatch } from './openapi-check.js';
import { dialects, enrolledTestServer, registerUser, type TestApp, type TestUser, testApp } from './support.js';

/** `DELETE /api/agent/server`: an agent removes its own server with its daemon token (`palisade-agent uninstall --forget`). */
for (const dialect of dialects()) {
  describe(`an agent removing its own server (${dialect})`, () => {
    let t: TestApp;
    let owner: TestUser;
    before(async () => {
      t = await testApp(dialect);
      owner = await registerUser(t.app);
    });
    after(() => t.close());

    const forget = (authorization?: string) =>
      t.app.inject({
        method: 'DELETE',
        url: '/api/agent/server',
        headers: authorization ? { authorization } : {},
      });
    const serverIds = async () =>
      (await t.db.selectFrom('servers').select('id').where('account_id', '=', owner.id).execute()).map((r) => r.id);

    test('its daemon token removes that server only; the token then no longer works', async () => {
      const gone = await enrolledTestServer(t.app, owner, { name: 'gone', hostname: null, public_ip: null });
      const kept = await enrolledTestServer(t.app, owner, { name: 'kept', hostname: null, public_ip: null });
      const res = await forget(`Bearer ${gone.daemon}`);
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json(), { data: { deleted: true } });
      assert.equal(openApiMismatch('/api/agent/server', 'DELETE', 200, res.json()), null);
      assert.deepEqual(await serverIds(), [kept.serverId]);
      const again = await forget(`Bearer ${gone.daemon}`);
      assert.equal(again.statusCode, 401);
      assert.equal(again.json().error, 'invalid daemon token');
    });

    test('no token, another kind of token or an unknown one is 401 and removes nothing', async () => {
      const before = await serverIds();
      for (const [authorization, error] of [
        [undefined, /^missing daemon token/],
        ['Bearer ', /^missing daemon token/],
        [`Bearer ${generateToken('enrolment')}`, /^invalid daemon token$/],
        [`Bearer ${generateToken('daemon')}`, /^invalid daemon token$/],
      ] as const) {
        const res = await forget(authorization);
        assert.equal(res.statusCode, 401, `${authorization}: ${res.body}`);
        assert.match(res.json().error, error);
      }
      assert.deepEqual(await serverIds(), before);
    });
  });
}
