/**
 * The agent's 20 control paths: the only values the console's control proxy forwards (docs/fleet.md,
 * "Proxies"), the agent's control routes, and the SDK's control calls. No dependencies, so the agent
 * and the SDK can import it without loading zod.
 */
export const CONTROL_PATHS = [
  'config',
  'whitelist',
  'whitelist/clear',
  'whitelist/import',
  'blacklist',
  'blacklist/clear',
  'geo/mode',
  'geo/toggle',
  'baseline/export',
  'baseline/import',
  'baseline/delete',
  'autofetch/toggle',
  'autofetch/never-add',
  'autofetch/never-remove',
  'autofetch/fetch-now',
  'schedule',
  'block-pattern',
  'attacks',
  'attacks/blacklist',
  'attacks/blacklist/status',
] as const;

export type ControlPath = (typeof CONTROL_PATHS)[number];

const known: ReadonlySet<string> = new Set(CONTROL_PATHS);

/** Exact match only: no case folding, trimming or slashes. */
export function isControlPath(value: string): value is ControlPath {
  return known.has(value);
}
