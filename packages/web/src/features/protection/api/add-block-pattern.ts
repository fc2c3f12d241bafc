import {
  JOURNAL_ERROR,
  JOURNAL_NAME,
  JOURNAL_REQUIRED,
  PATTERN_SOURCES,
  SOURCE_ERROR,
} from '@palisade/protocol/control-schemas';
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

/** The journal field as typed: identifiers and units separated by commas or spaces. */
const journalNames = (v: string) => v.split(/[\s,]+/).filter((n) => n !== '');

/**
 * A log pattern: `{name, file, regex (with an ip group), threshold, window_s, ban_s, source, journal}`
 * (docs/protection.md, "Where a pattern reads"); `source` and `journal` are refused in the agent's words.
 */
export const blockPatternInput = z
  .object({
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
    source: z.enum(PATTERN_SOURCES, { error: SOURCE_ERROR }),
    journal: z
      .string()
      .trim()
      .refine((v) => {
        const names = journalNames(v);
        return names.length <= 8 && names.every((n) => JOURNAL_NAME.test(n));
      }, JOURNAL_ERROR),
  })
  .refine((v) => v.source !== 'journal' || journalNames(v.journal).length > 0, {
    message: JOURNAL_REQUIRED,
    path: ['journal'],
  });

/** The form's fields as typed (the source select's value included). */
export type BlockPatternValues = Record<keyof z.input<typeof blockPatternInput>, string>;

export const checkBlockPattern = (values: BlockPatternValues) => parse(blockPatternInput, values);

export const toBlockPattern = (v: BlockPatternValues) => ({
  name: v.name,
  file: v.file,
  regex: v.regex,
  threshold: Number(v.threshold),
  window_s: Number(v.window_s),
  ban_s: Number(v.ban_s),
  source: v.source as (typeof PATTERN_SOURCES)[number],
  ...(journalNames(v.journal).length > 0 ? { journal: journalNames(v.journal) } : {}),
});
