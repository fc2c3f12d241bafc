/** Every console JSON answer: `{data}` on success, `{error}` (and for SVC1 failures `reason`) otherwise. */
export interface DataEnvelope<T> {
  data: T;
}

export interface ErrorEnvelope {
  error: string;
  reason?: string;
}

export const TOO_MANY_ATTEMPTS = 'too many attempts, try again later';
