import { SECTION_NAMES } from '../dashboard.js';
import type { RequestBodyName } from '../requests/index.js';
import { TAG_PATTERN } from '../server-tags.js';
import type { DashboardRoute } from './route.js';

/** The list of servers. */
export const serverListRoutes: DashboardRoute[] = [
  {
    method: 'get',
    path: '/api/servers',
    summary: 'The servers of the account, with counts by state',
    auth: 'any',
    status: 200,
    answer: 'servers',
    errors: [400, 401, 429],
    query: {
      tag: { description: 'only servers with this tag', schema: { type: 'string', pattern: TAG_PATTERN.source } },
    },
  },
];

/** One server: adding, reading, changing and removing it, its page and its benchmarks. */
export const serverRoutes: DashboardRoute[] = [
  {
    method: 'post',
    path: '/api/servers',
    summary: 'Add a server: checks the agent, stores its key sealed, enrols it',
    auth: 'session',
    status: 201,
    answer: 'server',
    errors: [400, 401, 409, 502],
  },
  {
    method: 'post',
    path: '/api/servers/test',
    summary: 'Whether an address (or a saved server) answers as an agent with this key',
    auth: 'session',
    status: 200,
    answer: 'connection',
    errors: [400, 401, 404],
  },
  {
    method: 'get',
    path: '/api/servers/{id}',
    summary: "One server, the owner's view",
    auth: 'sessionOrSigned',
    status: 200,
    answer: 'server',
    errors: [401, 404],
  },
  {
    method: 'patch',
    path: '/api/servers/{id}',
    summary: 'Rename, tag, move or re-key a server',
    auth: 'session',
    status: 200,
    answer: 'server',
    errors: [400, 401, 404],
  },
  {
    method: 'delete',
    path: '/api/servers/{id}',
    summary: 'Remove a server',
    auth: 'session',
    status: 200,
    answer: 'deleted',
    errors: [401, 404],
  },
  {
    method: 'delete',
    path: '/api/agent/server',
    summary:
      'An agent removes its own server (palisade-agent uninstall --forget), with the daemon token it checks in with',
    auth: 'daemon',
    status: 200,
    answer: 'deleted',
    errors: [401],
  },
  {
    method: 'post',
    path: '/api/servers/{id}/enrollment',
    summary: 'A new daemon token and the enrol command, for an agent the console cannot reach',
    auth: 'session',
    status: 200,
    answer: 'enrollment',
    errors: [401, 403, 404],
  },
  {
    method: 'put',
    path: '/api/servers/{id}/connection',
    summary:
      'Switch how the console reaches the server: `direct` at its address, `outbound` only through its link (control.edit; audited)',
    auth: 'session',
    status: 200,
    answer: 'server',
    errors: [400, 401, 403, 404],
  },
  {
    method: 'get',
    path: '/api/servers/{id}/section',
    summary: 'One section of the server page; the answer follows `name`',
    auth: 'session',
    status: 200,
    answer: 'section',
    errors: [400, 401, 403, 404],
    query: {
      name: { description: 'which section', schema: { type: 'string', enum: [...SECTION_NAMES] }, required: true },
      range: { description: 'history only; default 24h', schema: { type: 'string', enum: ['1h', '24h', '7d', '30d'] } },
    },
  },
  {
    method: 'get',
    path: '/api/servers/{id}/metrics',
    summary: "The agent's /metrics snapshot through the console (no envelope)",
    auth: 'session',
    status: 200,
    answer: 'metrics',
    errors: [401, 404, 502],
  },
  {
    method: 'get',
    path: '/api/servers/{id}/benchmarks',
    summary: 'Benchmark runs of any status, with log and checks',
    auth: 'session',
    status: 200,
    answer: 'runs',
    errors: [401, 404],
  },
  {
    method: 'post',
    path: '/api/servers/{id}/benchmarks',
    summary: 'Queue a benchmark run for the next check-in',
    auth: 'session',
    status: 201,
    answer: 'run',
    errors: [400, 401, 403, 404, 409],
  },
];

/** The body each write of this area takes, by `<method> <path>` (schemas in packages/protocol/src/requests). */
export const serverRequestBodies: Record<string, RequestBodyName> = {
  'post /api/servers': 'AddServer',
  'post /api/servers/test': 'TestServer',
  'patch /api/servers/{id}': 'UpdateServer',
  'put /api/servers/{id}/connection': 'ServerConnection',
  'post /api/servers/{id}/benchmarks': 'Benchmark',
};
