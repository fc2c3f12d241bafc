import type { RequestBodyName } from '../requests/index.js';
import { type DashboardRoute, paging } from './route.js';

/** The signed-in account: who it is, its webhook, security events, and its security (docs/security.md, "Account security"). */
export const accountRoutes: DashboardRoute[] = [
  // account
  {
    method: 'get',
    path: '/api/account/me',
    summary:
      'The signed-in account with its permissions and how the person signs in (`sign_in`: `password`, or `single_sign_on` for a person without a password)',
    auth: 'sessionOrSigned',
    status: 200,
    answer: 'me',
    errors: [401],
  },
  {
    method: 'get',
    path: '/api/account/webhook',
    summary: 'The ticket-notification webhook and a page of its delivery attempts, newest first',
    auth: 'session',
    status: 200,
    answer: 'webhook',
    errors: [400, 401],
    query: paging,
  },
  {
    method: 'put',
    path: '/api/account/webhook',
    summary: 'Set the webhook URL; answers the signing secret',
    auth: 'session',
    status: 200,
    answer: 'webhookSet',
    errors: [400, 401],
  },
  {
    method: 'delete',
    path: '/api/account/webhook',
    summary: 'Remove the webhook',
    auth: 'session',
    status: 200,
    answer: 'deleted',
    errors: [401, 404],
  },
  {
    method: 'get',
    path: '/api/security/events',
    summary: "The account's refused logins and signatures, newest first",
    auth: 'session',
    status: 200,
    answer: 'securityEvents',
    errors: [400, 401],
    query: paging,
  },
  // account security (docs/security.md, "Account security")
  {
    method: 'post',
    path: '/api/account/password',
    summary:
      'Change the password (the old one is required); signs out every other session. 409 for a person without a password (single sign-on)',
    auth: 'session',
    status: 200,
    answer: 'passwordChanged',
    errors: [400, 401, 403, 409],
  },
  {
    method: 'get',
    path: '/api/account/sessions',
    summary: 'The signed-in browsers of the account, this one marked',
    auth: 'session',
    status: 200,
    answer: 'sessions',
    errors: [401],
  },
  {
    method: 'delete',
    path: '/api/account/sessions/{id}',
    summary: 'Sign one session out',
    auth: 'session',
    status: 200,
    answer: 'revoked',
    errors: [400, 401, 404],
  },
  {
    method: 'post',
    path: '/api/account/sessions/revoke-others',
    summary: 'Sign out everywhere else',
    auth: 'session',
    status: 200,
    answer: 'sessionsEnded',
    errors: [401],
  },
  {
    method: 'get',
    path: '/api/account/two-factor',
    summary: 'Whether two-factor sign-in is on, and how many recovery codes are left',
    auth: 'session',
    status: 200,
    answer: 'twoFactor',
    errors: [401],
  },
  {
    method: 'post',
    path: '/api/account/two-factor/setup',
    summary:
      'Start turning two-factor on (password required): a new secret, shown once. 409 for a person without a password, whose provider covers it',
    auth: 'session',
    status: 200,
    answer: 'twoFactorSetup',
    errors: [400, 401, 403, 409],
  },
  {
    method: 'post',
    path: '/api/account/two-factor/enable',
    summary: 'Confirm the secret with a code; answers the 10 recovery codes once',
    auth: 'session',
    status: 200,
    answer: 'twoFactorEnabled',
    errors: [400, 401, 403, 409],
  },
  {
    method: 'post',
    path: '/api/account/two-factor/disable',
    summary: 'Turn two-factor off (the password or a code required)',
    auth: 'session',
    status: 200,
    answer: 'twoFactor',
    errors: [400, 401, 403, 409, 429],
  },
  {
    method: 'delete',
    path: '/api/account',
    summary:
      'Delete the account and everything it owns (the password, and a code when two-factor is on; for a person without a password, a session started by single sign-on in the last 10 minutes)',
    auth: 'session',
    status: 200,
    answer: 'accountDeleted',
    errors: [400, 401, 403, 409, 429],
  },
];

/** The body each write of this area takes, by `<method> <path>` (schemas in packages/protocol/src/requests). */
export const accountRequestBodies: Record<string, RequestBodyName> = {
  'put /api/account/webhook': 'Webhook',
  'post /api/account/password': 'ChangePassword',
  'post /api/account/two-factor/setup': 'Password',
  'post /api/account/two-factor/enable': 'Code',
  'post /api/account/two-factor/disable': 'Proof',
  'delete /api/account': 'Proof',
};
