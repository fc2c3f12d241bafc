/** The agent's version, reported in /health, /metrics and check-ins. */
export const AGENT_VERSION = '0.1.0';
