import { ApiError, proxyRequest } from '../../../lib/api';
import { useQuery } from '../../../lib/query';

/** One of the 20 agent control paths the console forwards (spec, proxy rule 2). */
export type ControlPath =
  | 'config'
  | 'whitelist'
  | 'whitelist/clear'
  | 'whitelist/import'
  | 'blacklist'
  | 'blacklist/clear'
  | 'geo/mode'
  | 'geo/toggle'
  | 'baseline/export'
  | 'baseline/import'
  | 'baseline/delete'
  | 'autofetch/toggle'
  | 'autofetch/never-add'
  | 'autofetch/never-remove'
  | 'autofetch/fetch-now'
  | 'schedule'
  | 'block-pattern'
  | 'attacks'
  | 'attacks/blacklist'
  | 'attacks/blacklist/status';

export const controlKey = (serverId: number, path: ControlPath) => ['server', serverId, 'control', path];

export const controlUrl = (serverId: number, path: ControlPath) =>
  `/api/servers/${serverId}/control?path=${encodeURIComponent(path)}`;

export const getControl = <T>(serverId: number, path: ControlPath) =>
  proxyRequest<T>('GET', controlUrl(serverId, path));

export const useControl = <T>(serverId: number, path: ControlPath, options: { intervalMs?: number } = {}) =>
  useQuery(controlKey(serverId, path), () => getControl<T>(serverId, path), options);

/** What a failed control call means: the agent lacks the feature, the account lacks the right, or it is down. */
export function controlProblem(err: unknown): { kind: 'missing' | 'forbidden' | 'down' | 'other'; text: string } {
  if (err instanceof ApiError) {
    if (err.status === 404 || err.status === 405)
      return { kind: 'missing', text: 'Not available on this agent yet. Update the agent to use it.' };
    if (err.status === 403 && /permission/.test(err.message))
      return { kind: 'forbidden', text: 'Your account cannot view protection settings (needs control.read).' };
    if (err.status === 502) return { kind: 'down', text: 'The agent does not answer right now.' };
    return { kind: 'other', text: err.message };
  }
  return { kind: 'other', text: err instanceof Error ? err.message : String(err) };
}

/** Agents answer lists either bare or wrapped; take the first array found. */
export function listOf<T>(body: unknown, ...keys: string[]): T[] {
  if (Array.isArray(body)) return body as T[];
  if (body && typeof body === 'object') {
    const record = body as Record<string, unknown>;
    for (const key of [...keys, 'entries', 'items', 'data']) {
      const value = record[key];
      if (Array.isArray(value)) return value as T[];
      if (value && typeof value === 'object' && key === 'data') return listOf<T>(value, ...keys);
    }
  }
  return [];
}
