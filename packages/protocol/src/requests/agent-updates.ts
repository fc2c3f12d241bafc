/**
 * `POST /api/agent-updates` (docs/fleet.md, "Agent updates"): the schema lives beside the other
 * agent-update shapes (agent-update-schemas.ts); it is named here with the other request bodies.
 */
export { type StartRolloutRequest, startRolloutRequest } from '../agent-update-schemas.js';
