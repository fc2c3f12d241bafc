import { type ControlPath, isControlPath } from '@palisade/protocol/control';
import { z } from 'zod';
import { ApiError, isPermissionError, proxyRequest } from '../../../lib/api';
import { useQuery } from '../../../lib/query';

export type { ControlPath };
export { isControlPath };

export const controlKey = (serverId: number, path: ControlPath) => ['server', serverId, 'control', path];

export const controlUrl = (serverId: number, path: ControlPath) =>
  `/api/servers/${serverId}/control?path=${encodeURIComponent(path)}`;

export const getControl = <T>(serverId: number, path: ControlPath) =>
  proxyRequest<T>('GET', controlUrl(serverId, path));

export const useControl = <T>(serverId: number, path: ControlPath, options: { intervalMs?: number } = {}) =>
  useQuery(controlKey(serverId, path), () => getControl<T>(serverId, path), options);

/**
 * The field each list-shaped control answer carries its items in (the agent's answers, see
 * packages/agent/src/http/control-routes.ts): the lists `{entries}`, `{schedule}`, `{patterns}`, `{attacks}`.
 */
export const CONTROL_LIST_FIELD = {
  whitelist: 'entries',
  blacklist: 'entries',
  'autofetch/never-add': 'entries',
  'autofetch/never-remove': 'entries',
  schedule: 'schedule',
  'block-pattern': 'patterns',
  attacks: 'attacks',
} as const satisfies Partial<Record<ControlPath, string>>;

export type ControlListPath = keyof typeof CONTROL_LIST_FIELD;

/** The answer of a list path: an object whose known field is an array of objects. */
export const controlListSchema = (path: ControlListPath) =>
  z.looseObject({ [CONTROL_LIST_FIELD[path]]: z.array(z.looseObject({})) });

/** The items of a list path's answer; an answer without its known field is an error, not an empty list. */
export function itemsOf<T>(path: ControlListPath, body: unknown): T[] {
  const parsed = controlListSchema(path).safeParse(body);
  if (!parsed.success) throw new Error(`The agent's answer to ${path} has no ${CONTROL_LIST_FIELD[path]} list.`);
  return parsed.data[CONTROL_LIST_FIELD[path]] as T[];
}

export const getControlList = async <T>(serverId: number, path: ControlListPath) =>
  itemsOf<T>(path, await getControl<unknown>(serverId, path));

export const useControlList = <T>(serverId: number, path: ControlListPath, options: { intervalMs?: number } = {}) =>
  useQuery(controlKey(serverId, path), () => getControlList<T>(serverId, path), options);

/** What a failed control call means: the agent lacks the feature, the account lacks the right, or it is down. */
export function controlProblem(err: unknown): { kind: 'missing' | 'forbidden' | 'down' | 'other'; text: string } {
  if (isPermissionError(err))
    return { kind: 'forbidden', text: 'Your account cannot view protection settings (needs control.read).' };
  if (err instanceof ApiError) {
    if (err.status === 404 || err.status === 405)
      return { kind: 'missing', text: 'Not available on this agent yet. Update the agent to use it.' };
    if (err.status === 502) return { kind: 'down', text: 'The agent does not answer right now.' };
    return { kind: 'other', text: err.message };
  }
  return { kind: 'other', text: err instanceof Error ? err.message : String(err) };
}
