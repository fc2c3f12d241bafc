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
      // Its confirmation e-mail could not go: the channel says so, and waits (docs/alerts.md, "E-mail channels").
      const channel = created.json().data.channel;
      assert.equal(channel.confirmed, false);
      assert.match(channel.last_error, /^confirmation e-mail: .*PALISADE_SMTP_URL is not set/);
      const tested = await t.app.inject({
        method: 'POST',
        url: `/api/alerts/channels/${channel.id}/test`,
        headers: { cookie: user.cookie },
      });
      assert.equal(tested.statusCode, 409);
      assert.match(tested.json().error, /^channel: waiting for confirmation/);
      const resent = await t.app.inject({
        method: 'POST',
        url: `/api/alerts/channels/${channel.id}/confirmation`,
        headers: { cookie: user.cookie },
      });
      assert.equal(resent.statusCode, 200, resent.body);
      assert.match(resent.json().data.channel.last_error, /PALISADE_SMTP_URL is not set/);
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
