import { accountRequestBodies, accountRoutes } from './dashboard-routes/account.js';
import { agentUpdateRequestBodies, agentUpdateRoutes } from './dashboard-routes/agent-updates.js';
import { alertRequestBodies, alertRoutes } from './dashboard-routes/alerts.js';
import { authRequestBodies, authRoutes } from './dashboard-routes/auth.js';
import { billingRequestBodies, billingRoutes } from './dashboard-routes/billing.js';
import { credentialRequestBodies, enrolmentTokenAndKeyRoutes, tokenRoutes } from './dashboard-routes/credentials.js';
import { protectionRequestBodies, protectionRoutes } from './dashboard-routes/protection.js';
import type { DashboardRoute } from './dashboard-routes/route.js';
import { serverListRoutes, serverRequestBodies, serverRoutes } from './dashboard-routes/servers.js';
import { teamRequestBodies, teamRoutes } from './dashboard-routes/teams.js';
import { ticketRequestBodies, ticketRoutes } from './dashboard-routes/tickets.js';
import type { RequestBodyName } from './requests/index.js';

export type { DashboardRoute, RouteAuth, RouteMethod } from './dashboard-routes/route.js';

/**
 * Every session-cookie route of the console and what it answers (schemas in
 * packages/protocol/src/dashboard.ts), one file per area in packages/protocol/src/dashboard-routes/.
 * The order is the OpenAPI document's order of paths. The console's tests fail when a registered
 * route is neither here, in v1, nor on their short allow-list (packages/console/test/openapi-routes.test.ts).
 */
export const dashboardRoutes: DashboardRoute[] = [
  ...authRoutes,
  ...accountRoutes,
  ...tokenRoutes,
  ...alertRoutes,
  ...enrolmentTokenAndKeyRoutes,
  ...teamRoutes,
  ...billingRoutes,
  ...serverListRoutes,
  ...protectionRoutes,
  ...serverRoutes,
  ...ticketRoutes,
  ...agentUpdateRoutes,
];

/** The body each write takes, by `<method> <path>` (schemas in packages/protocol/src/requests). */
export const dashboardRequestBodies: Record<string, RequestBodyName> = {
  ...authRequestBodies,
  ...accountRequestBodies,
  ...credentialRequestBodies,
  ...alertRequestBodies,
  ...teamRequestBodies,
  ...billingRequestBodies,
  ...protectionRequestBodies,
  ...serverRequestBodies,
  ...ticketRequestBodies,
  ...agentUpdateRequestBodies,
};
