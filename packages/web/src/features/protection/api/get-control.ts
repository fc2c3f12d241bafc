import { type ControlPath, isControlPath } from '@palisade/protocol/control';
import {
  answerSchema,
  type ControlAnswer,
  checkControl,
  controlOperation,
  type FeedPageAnswer,
  type LookupAnswer,
} from '@palisade/protocol/control-schemas';
import { ApiError, isPermissionError, proxyRequest } from '../../../lib/api';
import { useQuery } from '../../../lib/query';

export type { ControlPath };
export { isControlPath };

export const controlKey = (serverId: number, path: ControlPath) => ['server', serverId, 'control', path];

/** The control proxy's address for `path`, with the query parameters the contract gives it. */
export const controlUrl = (serverId: number, path: ControlPath, params: Record<string, string> = {}) =>
  `/api/servers/${serverId}/control?${new URLSearchParams({ path, ...params }).toString()}`;

/** The paths that answer a GET (packages/protocol/src/control-schemas.ts). */
export type ReadablePath = {
  [P in ControlPath]: ControlAnswer<P> extends never ? never : P;
}[ControlPath];

/**
 * Reads a control path and checks the agent's answer against the path's schema: an answer this
 * dashboard cannot read is an error saying so, never a half-drawn panel.
 */
export async function getControl<P extends ReadablePath>(serverId: number, path: P): Promise<ControlAnswer<P>> {
  return readAnswer(path, await proxyRequest<unknown>('GET', controlUrl(serverId, path)));
}

/** The answer to a GET of `path`, checked against its schema; throws when it does not fit. */
export function readAnswer<P extends ReadablePath>(path: P, body: unknown): ControlAnswer<P> {
  const op = controlOperation(path, 'GET');
  const checked = op ? checkControl(op.answer, body) : null;
  if (!checked?.ok)
    throw new Error(
      `The agent's answer to ${path} is not what this console reads (${checked?.problem ?? 'no GET'}); update the agent.`,
    );
  return checked.value as ControlAnswer<P>;
}

export const useControl = <P extends ReadablePath>(serverId: number, path: P, options: { intervalMs?: number } = {}) =>
  useQuery(controlKey(serverId, path), () => getControl(serverId, path), options);

/**
 * A GET of `blacklist` with query parameters (`ip`, or `source` with `cursor` and `limit`), checked
 * against the answer the contract gives for them (packages/protocol/src/control-schemas.ts).
 */
async function readBlacklist<T>(serverId: number, params: Record<string, string>): Promise<T> {
  const body = await proxyRequest<unknown>('GET', controlUrl(serverId, 'blacklist', params));
  const op = controlOperation('blacklist', 'GET')!;
  const checked = checkControl(
    answerSchema(op, (p) => p in params),
    body,
  );
  if (!checked.ok)
    throw new Error(
      `The agent's answer to the lookup is not what this console reads (${checked.problem}); update the agent.`,
    );
  return checked.value as T;
}

/** "Why is this address blocked?": every source holding `ip` and what the firewall does with it. */
export const lookUpAddress = (serverId: number, ip: string) => readBlacklist<LookupAnswer>(serverId, { ip });

/** One page of a feed's entries; `cursor` is the previous page's `next_cursor`. */
export const getFeedPage = (serverId: number, feed: string, cursor: string | null) =>
  readBlacklist<FeedPageAnswer>(serverId, { source: `feed:${feed}`, ...(cursor ? { cursor } : {}) });

/** The field each list-shaped answer carries its items in; the schema types each field. */
export const CONTROL_LIST_FIELD = {
  whitelist: 'entries',
  blacklist: 'entries',
  'autofetch/never-add': 'entries',
  'autofetch/never-remove': 'entries',
  schedule: 'schedule',
  'block-pattern': 'patterns',
  attacks: 'attacks',
} as const satisfies { [P in ReadablePath]?: keyof ControlAnswer<P> };

export type ControlListPath = keyof typeof CONTROL_LIST_FIELD;
/** The four address lists, whose answers share one shape. */
export type EntryListPath = 'whitelist' | 'blacklist' | 'autofetch/never-add' | 'autofetch/never-remove';
export type ControlItem<P extends ControlListPath> =
  ControlAnswer<P>[(typeof CONTROL_LIST_FIELD)[P]] extends (infer I)[] ? I : never;

/** The items of a list path's (checked) answer. */
export const itemsOf = <P extends ControlListPath>(path: P, answer: ControlAnswer<P>) =>
  answer[CONTROL_LIST_FIELD[path]] as ControlItem<P>[];

export const getControlList = async <P extends ControlListPath>(serverId: number, path: P) =>
  itemsOf(path, await getControl(serverId, path));

export const useControlList = <P extends ControlListPath>(
  serverId: number,
  path: P,
  options: { intervalMs?: number } = {},
) => useQuery(controlKey(serverId, path), () => getControlList(serverId, path), options);

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
