import { PAGE_LIMIT_DEFAULT, PAGE_LIMIT_MAX } from '@palisade/protocol';
import type { z } from 'zod';
import { badRequest } from './errors.js';

/** What zod's `expected` names, in words: `expected a string`. */
const EXPECTED: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  boolean: 'true or false',
  array: 'an array',
  object: 'an object',
  bigint: 'an integer',
  date: 'a date',
};

/** The JSON type of a value given, in words: `got null`, `got an array`. */
function got(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'boolean') return 'a boolean';
  return `a ${typeof value}`;
}

/** Whether the input has the field at `path` at all (own properties only), and what it holds. */
function lookup(value: unknown, path: readonly PropertyKey[]): { present: boolean; value?: unknown } {
  let current = value;
  for (const key of path) {
    if (current === null || typeof current !== 'object' || !Object.hasOwn(current, key)) return { present: false };
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return { present: current !== undefined, value: current };
}

function describe(issue: z.core.$ZodIssue, input: unknown): string {
  if (issue.code === 'unrecognized_keys') return `unknown field ${issue.keys.join(', ')}`;
  if (issue.code !== 'invalid_type') return issue.message;
  // zod reports a missing field and a wrongly typed one alike; the input tells them apart.
  const field = lookup(input, issue.path);
  if (!field.present) return 'is required';
  // A schema's own message ("expected a positive integer") wins over zod's default wording.
  if (!issue.message.startsWith('Invalid input')) return issue.message;
  return `expected ${EXPECTED[issue.expected] ?? issue.expected}, got ${got(field.value)}`;
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
  throw badRequest(`${field}: ${describe(issue, value)}`);
}

/** A path id: a positive decimal integer without sign, exponent or leading zeros, within the safe range. */
export function parseId(raw: unknown): number | null {
  if (typeof raw !== 'string' || !/^[1-9][0-9]{0,15}$/.test(raw)) return null;
  const id = Number(raw);
  return Number.isSafeInteger(id) ? id : null;
}

/**
 * The key that made a JSON text fail the prototype-poisoning check (`__proto__`, or `constructor` holding a
 * `prototype`), or null when the text is not valid JSON at all. JSON.parse only defines own properties, so
 * reading the text this way pollutes nothing.
 */
export function forbiddenJsonKey(text: string): string | null {
  let found: string | null = null;
  try {
    JSON.parse(text, (key, value) => {
      if (key === '__proto__') found ??= '__proto__';
      else if (
        key === 'constructor' &&
        value !== null &&
        typeof value === 'object' &&
        Object.hasOwn(value, 'prototype')
      )
        found ??= 'constructor.prototype';
      return value;
    });
  } catch {
    return null;
  }
  return found;
}

/** Where a page of a list starts: after the row with this sort key and id; null is the first page. */
export type PageAfter = readonly [key: number, id: number] | null;

/** A page request: `cursor` (opaque, from `next_cursor`) and `limit` (docs/api.md, "Lists that page"). */
export interface PageRequest {
  after: PageAfter;
  limit: number;
}

/** The cursor after a row: base64url of `[key,id]`, which parsePage reads back and nothing else. */
export function pageCursor(key: number, id: number): string {
  return Buffer.from(JSON.stringify([key, id])).toString('base64url');
}

/**
 * Reads `cursor` and `limit` from a query string, or throws a 400 naming the one that is wrong. A cursor is
 * accepted only in the exact form pageCursor writes, so an edited or truncated one is refused, not guessed at.
 */
export function parsePage(query: { cursor?: unknown; limit?: unknown }): PageRequest {
  const limitRaw = query.limit ?? String(PAGE_LIMIT_DEFAULT);
  if (typeof limitRaw !== 'string' || !/^[0-9]{1,3}$/.test(limitRaw) || +limitRaw < 1 || +limitRaw > PAGE_LIMIT_MAX) {
    throw badRequest(`limit: expected an integer from 1 to ${PAGE_LIMIT_MAX}`);
  }
  if (query.cursor === undefined) return { after: null, limit: Number(limitRaw) };
  const raw = query.cursor;
  const bad = badRequest('cursor: expected the next_cursor of an earlier page');
  if (typeof raw !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(raw)) throw bad;
  const match = /^\[(0|[1-9][0-9]{0,15}),([1-9][0-9]{0,15})\]$/.exec(Buffer.from(raw, 'base64url').toString('utf8'));
  if (!match) throw bad;
  const key = Number(match[1]);
  const id = Number(match[2]);
  if (!Number.isSafeInteger(key) || !Number.isSafeInteger(id) || pageCursor(key, id) !== raw) throw bad;
  return { after: [key, id], limit: Number(limitRaw) };
}
