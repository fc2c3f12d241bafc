import { createServersContext, type ServersDeps } from './context.js';
import { createServerControl } from './control.js';
import { createEnrolment } from './enrolment.js';
import { createServerReads } from './reads.js';
import { createServerSettings } from './settings.js';

export type { AgentTarget, ConnectionCheck } from './agent-client.js';
export { type AgentLinks, type AgentsService, createAgentsService } from './agents.js';
export type { ServerChangeListener, ServersDeps } from './context.js';
export type { NewServer } from './enrolment.js';
export { HISTORY_RANGES, type HistoryRange } from './history.js';
export type { ProxiedAnswer } from './proxy.js';
export { RECHECK_INTERVAL_MS } from './recheck.js';
export { type ServerState, serverState } from './state.js';
export { ONLINE_WINDOW_MS, runView, serverFacts, serverTags, storedReport } from './views.js';

/**
 * The fleet: a user's servers, their views, and the calls to their agents (docs/architecture.md,
 * "The console"). Every method looks the server up once, for the asking account (another account's
 * server is 404, like a missing one), and checks the permission the call needs after that lookup.
 */
export function createServersService(deps: ServersDeps) {
  const ctx = createServersContext(deps);
  return {
    /** One of the account's servers, or 404 (benchmarks read their server through it). */
    requireServer: deps.agents.requireServer,
    ...createEnrolment(ctx),
    ...createServerSettings(ctx),
    ...createServerControl(ctx),
    ...createServerReads(ctx),
  };
}

export type ServersService = ReturnType<typeof createServersService>;
