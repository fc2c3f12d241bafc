/**
 * A stable, machine-readable name for what went wrong, beside the sentence in `error` (docs/api.md,
 * "Errors"). Programs branch on `code`, people read `error`. The v1 API keeps its `{"error"}` bodies.
 */
export const ERROR_CODES = [
  'invalid_input',
  'unauthenticated',
  'signature_refused',
  'permission_required',
  'two_factor_required',
  'cross_site',
  'forbidden',
  'not_found',
  'conflict',
  'misdirected_host',
  'too_large',
  'unsupported_media_type',
  'rate_limited',
  'agent_error',
  'internal',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

/** The code an answer with this status carries when nothing more precise applies. */
export function errorCodeFor(status: number): ErrorCode {
  const byStatus: Record<number, ErrorCode> = {
    400: 'invalid_input',
    401: 'unauthenticated',
    403: 'forbidden',
    404: 'not_found',
    409: 'conflict',
    413: 'too_large',
    415: 'unsupported_media_type',
    421: 'misdirected_host',
    429: 'rate_limited',
    502: 'agent_error',
  };
  return byStatus[status] ?? (status >= 500 ? 'internal' : 'invalid_input');
}

/** Every console JSON answer: `{data}` on success, `{error, code}` (and for SVC1 failures `reason`) otherwise. */
export interface DataEnvelope<T> {
  data: T;
}

export interface ErrorEnvelope {
  error: string;
  /** Absent on the v1 API, whose failure bodies are `{"error"}` only. */
  code?: ErrorCode;
  reason?: string;
}

export const TOO_MANY_ATTEMPTS = 'too many attempts, try again later';
