import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { WebhookDelivery } from '@palisade/protocol';
import { checkChangePassword } from '../src/features/account/api/change-password';
import { checkSignInCode } from '../src/features/auth/api/sign-in-code';
import { deliveriesByEvent } from '../src/features/webhook/api/get-webhook';

const errorsOf = (result: { ok: boolean; errors?: object }) => (result.ok ? {} : result.errors);

describe('account forms', () => {
  test('change password: the current one, the register rule, the repeat matching', () => {
    assert.deepEqual(errorsOf(checkChangePassword({ old_password: '', new_password: 'short', repeat: 'short' })), {
      old_password: 'Must not be empty.',
      new_password: 'At least 8 characters.',
    });
    assert.deepEqual(
      errorsOf(checkChangePassword({ old_password: 'old', new_password: 'long enough', repeat: 'long enougH' })),
      { repeat: 'Not the same as the new password.' },
    );
    assert.equal(
      checkChangePassword({ old_password: 'old', new_password: 'long enough', repeat: 'long enough' }).ok,
      true,
    );
  });

  test("sign-in code: the console's limits, then 6 digits or a recovery code, with or without its dash", () => {
    const challenge = 'c';
    for (const code of ['123456', 'abcde-fghjk', 'ABCDEFGHJK', ' 654321 '])
      assert.equal(checkSignInCode({ challenge, code }).ok, true, code);
    for (const code of ['12345', '1234567', 'abc'])
      assert.deepEqual(errorsOf(checkSignInCode({ challenge, code })), {
        code: 'Type the 6 digits your authenticator app shows, or one of your recovery codes.',
      });
    assert.deepEqual(errorsOf(checkSignInCode({ challenge, code: '  ' })), { code: 'Must not be empty.' });
  });
});

describe('the notification log', () => {
  const attempt = (
    id: number,
    notification_id: number,
    status: WebhookDelivery['status'],
    response_status: number | null,
  ) => ({
    id,
    notification_id,
    kind: notification_id === 1 ? 'ticket.created' : 'ticket.reply',
    status,
    created_at: 1_700_000_000_000 + id,
    url: 'https://hooks.example.com/x',
    response_status,
    error: response_status === null ? 'connection refused' : null,
    duration_ms: 12,
  });

  test('one entry per event, its attempts under it in the order given', () => {
    // Newest first, as the console lists them: event 2 was tried four times, event 1 twice.
    const log = [
      attempt(6, 2, 'delivered', 200),
      attempt(5, 2, 'delivered', 500),
      attempt(4, 1, 'delivered', 200),
      attempt(3, 2, 'delivered', null),
      attempt(2, 2, 'delivered', 503),
      attempt(1, 1, 'delivered', 502),
    ];
    const events = deliveriesByEvent(log);
    assert.deepEqual(
      events.map((e) => [e.id, e.kind, e.attempts.map((a) => a.id)]),
      [
        [2, 'ticket.reply', [6, 5, 3, 2]],
        [1, 'ticket.created', [4, 1]],
      ],
    );
    assert.deepEqual(deliveriesByEvent([]), []);
  });
});
