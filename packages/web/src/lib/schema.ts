/**
 * Input schemas for forms: the same limits the console checks, so most mistakes are caught before
 * a round trip. Each field returns an error text or null; `parse` gives typed values or errors.
 */
export type Check = (value: string) => string | null;

export const text =
  (opts: { min?: number; max: number; label?: string }): Check =>
  (value) => {
    const v = value.trim();
    if ((opts.min ?? 0) > 0 && v.length === 0) return 'Required.';
    if (opts.min && v.length < opts.min) return `At least ${opts.min} characters.`;
    if (v.length > opts.max) return `At most ${opts.max} characters.`;
    return null;
  };

export const pattern =
  (re: RegExp, message: string): Check =>
  (value) =>
    re.test(value.trim()) ? null : message;

export const all =
  (...checks: Check[]): Check =>
  (value) => {
    for (const check of checks) {
      const problem = check(value);
      if (problem) return problem;
    }
    return null;
  };

export type Schema<K extends string> = Record<K, Check>;
export type Errors<K extends string> = Partial<Record<K, string>>;

export function parse<K extends string>(
  schema: Schema<K>,
  values: Record<K, string>,
): { ok: true; value: Record<K, string> } | { ok: false; errors: Errors<K> } {
  const errors: Errors<K> = {};
  const value = {} as Record<K, string>;
  for (const key of Object.keys(schema) as K[]) {
    const problem = schema[key](values[key] ?? '');
    if (problem) errors[key] = problem;
    else value[key] = (values[key] ?? '').trim();
  }
  return Object.keys(errors).length > 0 ? { ok: false, errors } : { ok: true, value };
}
