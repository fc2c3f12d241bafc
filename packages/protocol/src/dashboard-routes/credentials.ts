import type { RequestBodyName } from '../requests/index.js';
import type { DashboardRoute } from './route.js';

/** Personal access tokens. */
export const tokenRoutes: DashboardRoute[] = [
  {
    method: 'get',
    path: '/api/tokens',
    summary: 'Personal access tokens (never the token)',
    auth: 'session',
    status: 200,
    answer: 'tokens',
    errors: [401],
  },
  {
    method: 'post',
    path: '/api/tokens',
    summary: 'Create a token; the answer holds it once',
    auth: 'session',
    status: 201,
    answer: 'tokenCreated',
    errors: [400, 401, 409],
  },
  {
    method: 'delete',
    path: '/api/tokens/{id}',
    summary: 'Revoke a token',
    auth: 'session',
    status: 200,
    answer: 'revoked',
    errors: [401, 404],
  },
];

/** Enrolment tokens for the one-line install, and SVC1 signing keys. */
export const enrolmentTokenAndKeyRoutes: DashboardRoute[] = [
  {
    method: 'get',
    path: '/api/enrolment-tokens',
    summary: 'Enrolment tokens for the one-line install (never the token), with how many servers used each',
    auth: 'session',
    status: 200,
    answer: 'enrolmentTokens',
    errors: [401],
  },
  {
    method: 'post',
    path: '/api/enrolment-tokens',
    summary: 'Create an enrolment token for one product; the answer holds it and the install line once',
    auth: 'session',
    status: 201,
    answer: 'enrolmentTokenCreated',
    errors: [400, 401, 409],
  },
  {
    method: 'delete',
    path: '/api/enrolment-tokens/{id}',
    summary: 'Revoke an enrolment token (servers it added stay)',
    auth: 'session',
    status: 200,
    answer: 'revoked',
    errors: [401, 404],
  },
  {
    method: 'get',
    path: '/api/keys',
    summary: 'SVC1 signing keys (never the key)',
    auth: 'session',
    status: 200,
    answer: 'keys',
    errors: [401],
  },
  {
    method: 'post',
    path: '/api/keys',
    summary: 'Create a signing key; the answer holds it once',
    auth: 'session',
    status: 201,
    answer: 'keyCreated',
    errors: [400, 401, 409],
  },
  {
    method: 'delete',
    path: '/api/keys/{id}',
    summary: 'Revoke a signing key',
    auth: 'session',
    status: 200,
    answer: 'revoked',
    errors: [401, 404],
  },
];

/** The body each write of this area takes, by `<method> <path>` (schemas in packages/protocol/src/requests). */
export const credentialRequestBodies: Record<string, RequestBodyName> = {
  'post /api/tokens': 'CreateToken',
  'post /api/keys': 'CreateKey',
  'post /api/enrolment-tokens': 'CreateEnrolmentToken',
};
