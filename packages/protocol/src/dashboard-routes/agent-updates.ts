import type { RequestBodyName } from '../requests/index.js';
import type { DashboardRoute } from './route.js';

/** Agent updates (docs/fleet.md, "Agent updates"). */
export const agentUpdateRoutes: DashboardRoute[] = [
  {
    method: 'get',
    path: '/api/agent-updates',
    summary: 'The agent version served, how many servers run another, and the rollouts, newest first (control.read)',
    auth: 'sessionOrSigned',
    status: 200,
    answer: 'rollouts',
    errors: [401, 403],
  },
  {
    method: 'post',
    path: '/api/agent-updates',
    summary: 'Start a rollout of the served agent version, in waves (control.edit)',
    auth: 'sessionOrSigned',
    status: 201,
    answer: 'rollout',
    errors: [400, 401, 403, 409],
  },
  {
    method: 'get',
    path: '/api/agent-updates/{id}',
    summary: 'A rollout and each of its servers (control.read)',
    auth: 'sessionOrSigned',
    status: 200,
    answer: 'rolloutDetail',
    errors: [401, 403, 404],
  },
  {
    method: 'post',
    path: '/api/agent-updates/{id}/cancel',
    summary: 'Cancel a running rollout: servers not yet offered are skipped (control.edit)',
    auth: 'sessionOrSigned',
    status: 200,
    answer: 'rollout',
    errors: [401, 403, 404, 409],
  },
];

/** The body each write of this area takes, by `<method> <path>` (schemas in packages/protocol/src/requests). */
export const agentUpdateRequestBodies: Record<string, RequestBodyName> = {
  'post /api/agent-updates': 'StartRollout',
};
