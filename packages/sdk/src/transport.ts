import { PalisadeError, PalisadeNetworkError } from './errors.js';

export interface TransportOptions {
  /** Base URL, e.g. `https://console.example.com` or the agent's `http://203.0.113.7:9740`. */
  baseUrl: string;
  /** Per-request timeout; default 10 s. */
  timeoutMs?: number;
  /** Wait and retry when the server answers 429 with Retry-After; default true. */
  retryOn429?: boolean;
  /** How many times to retry a 429 before giving up; default 3. */
  maxRetries?: number;
  /** Longest single wait for Retry-After; default 120 s. */
  maxWaitS?: number;
  /** For tests and special runtimes; defaults to the global fetch. */
  fetch?: typeof fetch;
  /** For tests: how to wait. */
  sleep?: (ms: number) => Promise<void>;
}

export interface RawRequest {
  method: string;
  path: string;
  query?: Record<string, string | number | undefined>;
  /** Exact bytes to send (already serialized), or undefined for no body. */
  body?: string;
  /** Headers for this attempt; called again for each retry (a signed request needs a fresh nonce). */
  headers: () => Record<string, string>;
}

export interface RawAnswer {
  status: number;
  headers: Headers;
  text: string;
}

/** What the console clients (v1 and signed) take beside the transport's options. */
export interface ConsoleClientOptions extends TransportOptions {
  /**
   * The team to act in, sent as `X-Palisade-Team` on every request. A token or signing key acts in
   * its own team only: naming another answers 404 (docs/teams.md). Absent: the credential's team.
   */
  team?: number;
}

/** The header naming the team, or none: checked once, when a client is made. */
export function teamHeader(team: number | undefined): Record<string, string> {
  if (team === undefined) return {};
  if (!Number.isSafeInteger(team) || team < 1) throw new TypeError(`team must be a positive integer, got ${team}`);
  return { 'x-palisade-team': String(team) };
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** One place for timeouts, 429 retries and turning error answers into PalisadeError. */
export class Transport {
  readonly baseUrl: string;
  private readonly options: Required<Omit<TransportOptions, 'fetch' | 'sleep'>> &
    Pick<TransportOptions, 'fetch' | 'sleep'>;

  constructor(options: TransportOptions) {
    if (!/^https?:\/\//.test(options.baseUrl))
      throw new TypeError(`baseUrl must start with http:// or https://, got ${options.baseUrl}`);
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.options = { timeoutMs: 10_000, retryOn429: true, maxRetries: 3, maxWaitS: 120, ...options };
  }

  url(path: string, query?: RawRequest['query']): string {
    const url = new URL(`${this.baseUrl}${path}`);
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    return url.toString();
  }

  async send(req: RawRequest): Promise<RawAnswer> {
    const doFetch = this.options.fetch ?? fetch;
    const sleep = this.options.sleep ?? defaultSleep;
    for (let attempt = 0; ; attempt += 1) {
      let res: Response;
      try {
        res = await doFetch(this.url(req.path, req.query), {
          method: req.method,
          headers: req.headers(),
          ...(req.body !== undefined ? { body: req.body } : {}),
          signal: AbortSignal.timeout(this.options.timeoutMs),
          redirect: 'manual',
        });
      } catch (err) {
        const e = err as Error & { cause?: { code?: string } };
        const timedOut = e.name === 'TimeoutError' || e.name === 'AbortError';
        const detail = timedOut ? `no answer within ${this.options.timeoutMs} ms` : (e.cause?.code ?? e.message);
        throw new PalisadeNetworkError(`${req.method} ${this.baseUrl}${req.path}: ${detail}`, timedOut);
      }
      const text = await res.text();
      if (res.status === 429 && this.options.retryOn429 && attempt < this.options.maxRetries) {
        const wait = Number(res.headers.get('retry-after') ?? '1');
        if (Number.isFinite(wait) && wait <= this.options.maxWaitS) {
          await sleep(Math.max(0, wait) * 1000);
          continue;
        }
      }
      return { status: res.status, headers: res.headers, text };
    }
  }
}

/** `{data}` on 2xx; otherwise a PalisadeError with the server's `error` and `reason`. */
export function unwrap<T>(answer: RawAnswer, hint?: (body: { reason?: string }) => string | null): T {
  let body: { data?: unknown; error?: unknown; reason?: unknown } | null = null;
  try {
    body = answer.text ? JSON.parse(answer.text) : null;
  } catch {
    body = null;
  }
  if (answer.status >= 200 && answer.status < 300) {
    return (body && typeof body === 'object' && 'data' in body ? body.data : body) as T;
  }
  const error = typeof body?.error === 'string' ? body.error : `HTTP ${answer.status}`;
  const reason = typeof body?.reason === 'string' ? body.reason : null;
  const retry = answer.headers.get('retry-after');
  throw new PalisadeError(
    answer.status,
    error,
    reason,
    retry ? Number(retry) : null,
    hint?.({ reason: reason ?? undefined }) ?? null,
  );
}
