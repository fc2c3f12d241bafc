import { InputError } from '../lib/net.js';

/** A missing list entry or pattern: answered 404. */
export class NotFound extends Error {}
/** A request that clashes with work in progress: answered 409. */
export class Conflict extends Error {}

/** A control body that must be a JSON object; throws an InputError (400) otherwise. */
export function objectBody(body: unknown): Record<string, unknown> {
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    throw new InputError('body: expected a JSON object');
  return body as Record<string, unknown>;
}
