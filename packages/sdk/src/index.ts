export { AgentClient, type AgentClientOptions, CONTROL_PATHS, type ControlPath } from './agent.js';
export { PalisadeError, PalisadeNetworkError } from './errors.js';
export { SignedClient, type SignedClientOptions, type Ticket } from './signed.js';
export type { ConsoleClientOptions, TransportOptions } from './transport.js';
export { V1Client, type V1ClientOptions } from './v1.js';
