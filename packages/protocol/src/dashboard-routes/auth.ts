import type { RequestBodyName } from '../requests/index.js';
import type { DashboardRoute } from './route.js';

/** Signing up, in and out, and single sign-on. */
export const authRoutes: DashboardRoute[] = [
  {
    method: 'post',
    path: '/api/auth/register',
    summary: 'Create an account and sign in',
    auth: 'public',
    status: 201,
    answer: 'account',
    errors: [400, 409, 429],
  },
  {
    method: 'post',
    path: '/api/auth/login',
    summary: 'Sign in (sets the session cookie), or, with two-factor on, a challenge for the code',
    auth: 'public',
    status: 200,
    answer: 'login',
    errors: [400, 401, 429],
  },
  {
    method: 'post',
    path: '/api/auth/login/two-factor',
    summary: 'Second sign-in step: the challenge and a 6-digit code or a recovery code (sets the session cookie)',
    auth: 'public',
    status: 200,
    answer: 'account',
    errors: [400, 401, 429],
  },
  {
    method: 'get',
    path: '/api/auth/session',
    summary: 'Who is signed in, or null',
    auth: 'public',
    status: 200,
    answer: 'session',
    errors: [],
  },
  {
    method: 'post',
    path: '/api/auth/logout',
    summary: 'Sign out (clears the session cookie)',
    auth: 'public',
    status: 200,
    answer: 'loggedOut',
    errors: [],
  },
  {
    method: 'get',
    path: '/api/auth/oidc',
    summary:
      'Whether single sign-on (OpenID Connect) is set up, and the name for its button; /api/auth/oidc/start and /api/auth/oidc/callback are its browser redirects',
    auth: 'public',
    status: 200,
    answer: 'singleSignOn',
    errors: [],
  },
];

/** The body each write of this area takes, by `<method> <path>` (schemas in packages/protocol/src/requests). */
export const authRequestBodies: Record<string, RequestBodyName> = {
  'post /api/auth/register': 'Register',
  'post /api/auth/login': 'Login',
  'post /api/auth/login/two-factor': 'TwoFactorLogin',
};
