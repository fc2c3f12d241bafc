/**
 * The one way the dashboard talks to the console. `request()` unwraps the `{data}` envelope and
 * throws an `ApiError` carrying the status and the console's own message; `proxyRequest()` is for
 * the two proxies, which pass the agent's body through unchanged.
 */
import type { ErrorCode } from '@palisade/protocol/envelope';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly retryAfterS: number | null = null,
    /** The console's machine-readable error code, when the answer carries one beside `error`. */
    readonly code?: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/**
 * The code the console sends with a refused permission (packages/protocol/src/envelope.ts). A 403
 * without a code (an older console) is taken as one too; a 403 with another code is not.
 */
export const PERMISSION_REQUIRED: ErrorCode = 'permission_required';

/** The code of a member refused because their team requires two-factor sign-in (docs/teams.md). */
export const TWO_FACTOR_REQUIRED: ErrorCode = 'two_factor_required';

/** The one place an error answer becomes an `ApiError`: status, the console's sentence, its code. */
export function errorFromAnswer(status: number, body: unknown, retryAfter: string | null): ApiError {
  const record = body && typeof body === 'object' ? (body as Record<string, unknown>) : {};
  const message = typeof record.error === 'string' ? record.error : `The console answered HTTP ${status}.`;
  const code = typeof record.code === 'string' ? record.code : undefined;
  const retry = Number(retryAfter);
  return new ApiError(status, message, Number.isFinite(retry) && retry > 0 ? retry : null, code);
}

/** True when the account lacks a permission: by status (and code when present), never by the text. */
export function isPermissionError(err: unknown): err is ApiError {
  return err instanceof ApiError && err.status === 403 && (err.code === undefined || err.code === PERMISSION_REQUIRED);
}

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface RequestOptions {
  body?: unknown;
  query?: Record<string, string | number | undefined>;
  signal?: AbortSignal;
}

/** Called when any request answers 401, so the app can send the user back to sign in. */
let onUnauthorized: (() => void) | null = null;
export function setUnauthorizedHandler(handler: (() => void) | null) {
  onUnauthorized = handler;
}

/**
 * Called when a call acting in a team answers 403 `two_factor_required`, with that team: the app
 * sends the person to turn two-factor sign-in on (app/app.tsx), whatever page asked.
 */
let onTwoFactorRequired: ((team: number | null) => void) | null = null;
export function setTwoFactorRequiredHandler(handler: ((team: number | null) => void) | null) {
  onTwoFactorRequired = handler;
}

/**
 * The team every call acts in (docs/teams.md, "The team a request acts in"): the one in the
 * dashboard's address (`?team=<id>`, app/app.tsx keeps it there), sent as `X-Palisade-Team`. Calls
 * about the person rather than a team (signing in, the list of teams, an invitation link) go without.
 */
let team: number | null = null;
export function setRequestTeam(id: number | null) {
  team = id;
}
export const requestTeam = () => team;
const PERSON_PATHS = ['/api/auth/', '/api/teams', '/api/invitations/'];
export const TEAM_HEADER = 'x-palisade-team';

/** The team a call to `path` acts in (sent as the header), or null for a call about the person. */
const teamOfCall = (path: string): number | null => (PERSON_PATHS.some((p) => path.startsWith(p)) ? null : team);

function urlOf(path: string, query?: RequestOptions['query']): string {
  if (!query) return path;
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined) params.set(k, String(v));
  const qs = params.toString();
  return qs ? `${path}${path.includes('?') ? '&' : '?'}${qs}` : path;
}

async function send(method: Method, path: string, options: RequestOptions): Promise<{ res: Response; body: unknown }> {
  const actingIn = teamOfCall(path);
  let res: Response;
  try {
    res = await fetch(urlOf(path, options.query), {
      method,
      credentials: 'same-origin',
      headers: {
        accept: 'application/json',
        ...(actingIn === null ? {} : { [TEAM_HEADER]: String(actingIn) }),
        ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
    });
  } catch (err) {
    if ((err as Error).name === 'AbortError') throw err;
    throw new ApiError(0, 'The console did not answer. Check your connection and try again.');
  }
  const text = await res.text();
  let body: unknown = null;
  if (text) {
    try {
      body = JSON.parse(text);
    } catch {
      body = text;
    }
  }
  if (!res.ok) {
    if (res.status === 401 && !path.startsWith('/api/auth/')) onUnauthorized?.();
    const err = errorFromAnswer(res.status, body, res.headers.get('retry-after'));
    if (err.status === 403 && err.code === TWO_FACTOR_REQUIRED) onTwoFactorRequired?.(actingIn);
    throw err;
  }
  return { res, body };
}

/** A console API call; resolves to the `data` of the envelope. */
export async function request<T>(method: Method, path: string, options: RequestOptions = {}): Promise<T> {
  const { body } = await send(method, path, options);
  if (body && typeof body === 'object' && 'data' in body) return (body as { data: T }).data;
  throw new ApiError(500, 'The console sent an answer the dashboard does not understand.');
}

/** A call through the metrics or control proxy; resolves to the agent's body as it came. */
export async function proxyRequest<T>(method: Method, path: string, options: RequestOptions = {}): Promise<T> {
  const { body } = await send(method, path, options);
  return body as T;
}

/** Plain words for an error, whatever was thrown. */
export function errorText(err: unknown): string {
  if (err instanceof ApiError) {
    if (err.status === 429)
      return err.retryAfterS
        ? `Too many attempts. Try again in ${err.retryAfterS} s.`
        : 'Too many attempts. Try again later.';
    return err.message;
  }
  return err instanceof Error ? err.message : String(err);
}

/**
 * The console names the field a 4xx is about (`old_password: not the account's current password`).
 * A form shows such a message under that field, in words (`Not the account's current password.`):
 * `fieldError(message, 'old_password')` is its text for that field, `otherError(message, fields)` the
 * message when it is about none of the form's fields (shown above the button), else null.
 */
export function fieldError(message: string | null | undefined, field: string): string | undefined {
  if (!message?.startsWith(`${field}: `)) return undefined;
  const text = message.slice(field.length + 2).trim();
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}${/[.!?]$/.test(text) ? '' : '.'}`;
}

export function otherError(message: string | null | undefined, fields: readonly string[]): string | null {
  if (!message) return null;
  return fields.some((f) => message.startsWith(`${f}: `)) ? null : message;
}
