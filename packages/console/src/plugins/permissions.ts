import type { TeamPermission } from '@palisade/protocol';
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { AppError, permissionRequired } from '../errors.js';

/**
 * What a route needs of the request's actor (docs/teams.md, "Enforcement"), declared in its
 * options as `config: { permission, read }`:
 * - a team permission: the member's role (and overrides) in the team the request acts in must grant it;
 * - `person`: the signed-in person acting on what is theirs alone (password, two-factor, sessions,
 *   their own tokens and keys, leaving a team): every role;
 * - `console.admin`: the console-wide admin role (the catalog, every account's tickets);
 * - `public`: no actor (sign-in, the agents' own routes, invitation links), or one it checks itself.
 */
export type RouteAccess = TeamPermission | 'person' | 'console.admin' | 'public';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** What a write (POST, PUT, PATCH, DELETE) of this route needs. Every write route declares it. */
    permission?: RouteAccess;
    /** What a read (GET, HEAD) of this route needs; `fleet.read` when not declared. */
    read?: RouteAccess;
    /** The route's `:id` names the team the request acts in (`/api/teams/{id}`), in place of X-Palisade-Team. */
    teamFromParam?: boolean;
  }
}

const READS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** What the matched route needs for this request's method; undefined for a write route that declared nothing. */
export function neededFor(request: FastifyRequest): RouteAccess | undefined {
  const config = request.routeOptions.config;
  return READS.has(request.method) ? (config.read ?? 'fleet.read') : config.permission;
}

/**
 * After the route's own sign-in checks (its preHandlers), the one check of what the route the
 * router matched needs: `request.routeOptions.config`, never the raw URL. A request without an
 * actor (a public route, or a route that signs in some other way) has nothing to check here.
 */
export function checkRouteAccess(request: FastifyRequest) {
  const actor = request.account;
  if (!actor) return;
  const needed = neededFor(request);
  if (needed === undefined) throw permissionRequired('undeclared', 'this route declares no permission');
  if (needed === 'public' || needed === 'person') return;
  // The team requires two-factor sign-in: a member without it may only turn it on (their own routes).
  if (actor.two_factor_missing)
    throw new AppError(
      403,
      'this team requires two-factor sign-in: turn it on first (Settings → Account, POST /api/account/two-factor/setup)',
      { code: 'two_factor_required' },
    );
  if (needed === 'console.admin') {
    if (actor.role !== 'admin') throw permissionRequired('console.admin', 'this needs an admin account');
    return;
  }
  if (!actor.team_permissions.includes(needed)) throw permissionRequired(needed);
}

/** `checkRouteAccess` as a callback hook: the v1 routes answer in one turn of the event loop, without a promise. */
function enforceRouteAccess(request: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void) {
  try {
    checkRouteAccess(request);
  } catch (err) {
    done(err as Error);
    return;
  }
  done();
}

/** Every route gets `enforceRouteAccess` as its last preHandler (`app.routeList` lists what each declared). */
export function registerPermissions(app: FastifyInstance) {
  app.addHook('onRoute', (route: RouteOptions) => {
    const own = route.preHandler;
    route.preHandler = [...(own === undefined ? [] : Array.isArray(own) ? own : [own]), enforceRouteAccess];
  });
}
