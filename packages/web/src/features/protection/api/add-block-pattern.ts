import { z } from 'zod';
import { parse, text, wholeNumber } from '../../../lib/schema';

function compiles(source: string): boolean {
  try {
    new RegExp(source);
    return true;
  } catch {
    return false;
  }
}

/** A log pattern: `{name, file, regex (with an ip group), threshold, window_s, ban_s}` (docs/protection.md). */
export const blockPatternInput = z.object({
  name: text({ min: 1, max: 64 }),
  file: text({ min: 1, max: 500 }),
  regex: z
    .string()
    .trim()
    .min(1, 'Required.')
    .regex(/\(\?<ip>/, 'Include a named group for the address: (?<ip>…)')
    .refine(compiles, 'Not a valid regular expression.'),
  threshold: wholeNumber('Hits'),
  window_s: wholeNumber('Window'),
  ban_s: wholeNumber('Ban'),
});

export type BlockPatternValues = z.input<typeof blockPatternInput>;

export const checkBlockPattern = (values: BlockPatternValues) => parse(blockPatternInput, values);

export const toBlockPattern = (v: BlockPatternValues) => ({
  name: v.name,
  file: v.file,
  regex: v.regex,
  threshold: Number(v.threshold),
  window_s: Number(v.window_s),
  ban_s: Number(v.ban_s),
});
