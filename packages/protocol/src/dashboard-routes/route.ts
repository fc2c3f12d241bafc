import type { DashboardResponseName } from '../dashboard.js';
import { PAGE_LIMIT_DEFAULT, PAGE_LIMIT_MAX } from '../dashboard.js';

/**
 * Who may call a route: nobody in particular, a session, a session or an SVC1 signature, any
 * credential, an admin's session, or an agent with its daemon token (`dmn_…`).
 */
export type RouteAuth = 'public' | 'session' | 'sessionOrSigned' | 'any' | 'admin' | 'daemon';
export type RouteMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** One dashboard route: what it answers on success, and the failures it documents beside the guards' own. */
export interface DashboardRoute {
  method: RouteMethod;
  /** OpenAPI form: `/api/servers/{id}`. */
  path: string;
  summary: string;
  auth: RouteAuth;
  status: 200 | 201;
  answer: DashboardResponseName;
  errors: number[];
  query?: Record<string, { description: string; schema: Record<string, unknown>; required?: boolean }>;
}

/** The query of a list that pages (docs/api.md, "Lists that page"). */
export const paging: NonNullable<DashboardRoute['query']> = {
  cursor: {
    description: '`next_cursor` of the page before; the first page without it',
    schema: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$' },
  },
  limit: {
    description: `items on the page, 1 to ${PAGE_LIMIT_MAX}; default ${PAGE_LIMIT_DEFAULT}`,
    schema: { type: 'string', pattern: '^[0-9]{1,3}$' },
  },
};
