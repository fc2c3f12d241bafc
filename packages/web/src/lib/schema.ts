import { z } from 'zod';

/**
 * A request body checked with the console's own schema (packages/protocol/src/requests): the form
 * refuses what the console would refuse, and shows under each field the console's first message
 * for it as a sentence ("must not be empty" → "Must not be empty.", "expected an email address" →
 * "Enter an email address.").
 */
export type Checked<T, K extends string> = { ok: true; value: T } | { ok: false; errors: Partial<Record<K, string>> };

export function checkRequest<S extends z.ZodType>(
  schema: S,
  body: z.input<S>,
): Checked<z.output<S>, keyof z.input<S> & string> {
  const result = schema.safeParse(body);
  if (result.success) return { ok: true, value: result.data };
  const errors: Record<string, string> = {};
  for (const issue of result.error.issues) {
    const [key = '', ...inner] = issue.path;
    // An item of a list is named by its place: "Item 2: expected 1 to 32 of a-z …".
    const where = inner.map((p) => (typeof p === 'number' ? `item ${p + 1}` : String(p))).join(', ');
    // The console says what the request lacked ("expected an email address"); the form says what to type.
    const text = where ? `${where}: ${issue.message}` : issue.message.replace(/^expected /, 'enter ');
    errors[String(key)] ??= `${text[0]!.toUpperCase()}${text.slice(1)}${/[.!?…]$/.test(text) ? '' : '.'}`;
  }
  return { ok: false, errors: errors as Partial<Record<keyof z.input<S> & string, string>> };
}

/** A number typed as text, or undefined when the field is empty (the console then says what it expects). */
export const numberOf = (value: string) => (value.trim() === '' ? undefined : Number(value));

/**
 * The forms of the agent's control bodies (block patterns, list entries) check string fields with
 * these before the agent checks the body again. `parse` runs `safeParse` and keeps, per field, the first
 * message (the one the user sees under the field); text fields come back trimmed.
 */
export type FormSchema<K extends string> = z.ZodObject<Record<K, z.ZodType<string, string>>>;
export type Errors<K extends string> = Partial<Record<K, string>>;

/** A trimmed text field: "Required." when empty (if `min` > 0), then the length limits. */
export function text(opts: { min?: number; max: number }) {
  let schema = z.string().trim();
  if ((opts.min ?? 0) > 0) schema = schema.min(1, 'Required.');
  if (opts.min && opts.min > 1) schema = schema.min(opts.min, `At least ${opts.min} characters.`);
  return schema.max(opts.max, `At most ${opts.max} characters.`);
}

/** A trimmed field that must match `re` as a whole. */
export const pattern = (re: RegExp, message: string) => z.string().trim().regex(re, message);

/** A whole number above 0, typed as text (e.g. seconds); the message names the field. */
export const wholeNumber = (label: string) =>
  z
    .string()
    .trim()
    .refine((v) => /^\d+$/.test(v) && Number(v) > 0, `${label}: a whole number above 0.`);

export function parse<K extends string>(
  schema: FormSchema<K>,
  values: Record<K, string>,
): { ok: true; value: Record<K, string> } | { ok: false; errors: Errors<K> } {
  const result = schema.safeParse(values);
  if (result.success) return { ok: true, value: result.data as Record<K, string> };
  const errors: Errors<K> = {};
  for (const issue of result.error.issues) {
    const key = issue.path[0] as K | undefined;
    if (key !== undefined && errors[key] === undefined) errors[key] = issue.message;
  }
  return { ok: false, errors };
}
