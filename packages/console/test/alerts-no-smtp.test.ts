// Alerts on a console without PALISADE_SMTP_URL: an e-mail channel fails visibly (docs/alerts.md).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { dialects, registerUser, type TestApp, testApp } from './support.js';

for (const dialect of dialects()) {
  describe(`alerts without an SMTP server (${dialect})`, () => {
    let t: TestApp;
    before(async () => {
      t = await testApp(dialect);
    });
    after(() => t.close());

    test('an e-mail channel on a console without PALISADE_SMTP_URL fails visibly: in the test result, the channel and the history', async () => {
      const user = await registerUser(t.app);
      const headers = { cookie: user.cookie, 'content-type': 'application/json' };
      const created = await t.app.inject({
        method: 'POST',
        url: '/api/alerts/channels',
        headers,
        payload: JSON.stringify({ name: 'mail', kind: 'email', email: 'ops@example.com' }),
      });
      assert.equal(created.statusCode, 201, created.body);
      const id = created.json().data.channel.id;
      const tested = await t.app.inject({
        method: 'POST',
        url: `/api/alerts/channels/${id}/test`,
        headers: { cookie: user.cookie },
      });
      assert.equal(tested.statusCode, 200);
      assert.equal(tested.json().data.delivered, false);
      assert.match(tested.json().data.error, /PALISADE_SMTP_URL is not set/);
      assert.match(tested.json().data.channel.last_error, /PALISADE_SMTP_URL is not set/);
      const history = (
        await t.app.inject({ method: 'GET', url: '/api/alerts/history', headers: { cookie: user.cookie } })
      ).json().data.history;
      assert.deepEqual(
        history.map((h: { status: string; last_error: string }) => [h.status, /PALISADE_SMTP_URL/.test(h.last_error)]),
        [['failed', true]],
      );
      const refused = await t.app.inject({
        method: 'POST',
        url: '/api/alerts/channels',
        headers,
        payload: JSON.stringify({ name: 'chat', kind: 'slack', url: 'http://127.0.0.1:8080/hook' }),
      });
      assert.equal(refused.statusCode, 400);
      assert.match(refused.json().error, /^url: .*PALISADE_ALLOW_PRIVATE_TARGETS/);
    });
  });
}
