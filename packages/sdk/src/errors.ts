/** Any non-2xx answer, with what the server said: `status`, `error`, and for SVC1 failures `reason`. */
export class PalisadeError extends Error {
  constructor(
    readonly status: number,
    readonly error: string,
    readonly reason: string | null = null,
    readonly retryAfterS: number | null = null,
    /** Extra advice, e.g. how far the local clock is off when a signature is `stale` or `future`. */
    readonly hint: string | null = null,
  ) {
    super(`${status}: ${error}${reason ? ` (${reason})` : ''}${hint ? `. ${hint}` : ''}`);
    this.name = 'PalisadeError';
  }

  get isAuth(): boolean {
    return this.status === 401 || this.status === 403;
  }

  get isNotFound(): boolean {
    return this.status === 404;
  }

  get isRateLimited(): boolean {
    return this.status === 429;
  }
}

/** The request never got an answer: connection refused, DNS failure, or the timeout. */
export class PalisadeNetworkError extends Error {
  constructor(
    message: string,
    readonly timedOut: boolean,
  ) {
    super(message);
    this.name = 'PalisadeNetworkError';
  }
}
