import type { z } from 'zod';
import { badRequest } from './errors.js';

function describe(issue: z.core.$ZodIssue): string {
  if (issue.code === 'invalid_type' && (issue as { input?: unknown }).input === undefined) return 'is required';
  if (issue.code === 'unrecognized_keys') return `unknown field ${issue.keys.join(', ')}`;
  return issue.message;
}

/** Parses `value` or throws a 400 whose message names the field, e.g. `email: is required`. */
export function parseInput<S extends z.ZodType>(schema: S, value: unknown, where: string): z.output<S> {
  if (
    where === 'body' &&
    (value === undefined || value === null || typeof value !== 'object' || Array.isArray(value))
  ) {
    throw badRequest('body: expected a JSON object');
  }
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const field = issue.path.length > 0 ? issue.path.join('.') : where;
  throw badRequest(`${field}: ${describe(issue)}`);
}

/** A path id: a positive decimal integer without sign, exponent or leading zeros, within the safe range. */
export function parseId(raw: unknown): number | null {
  if (typeof raw !== 'string' || !/^[1-9][0-9]{0,15}$/.test(raw)) return null;
  const id = Number(raw);
  return Number.isSafeInteger(id) ? id : null;
}
