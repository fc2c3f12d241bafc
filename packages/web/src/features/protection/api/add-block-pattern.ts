import { parse, text } from '../../../lib/schema';

/** A log pattern: `{name, file, regex (with an ip group), threshold, window_s, ban_s}` (DESIGN §4). */
const whole = (label: string) => (v: string) =>
  /^\d+$/.test(v.trim()) && Number(v) > 0 ? null : `${label}: a whole number above 0.`;

export const blockPatternInput = {
  name: text({ min: 1, max: 64 }),
  file: text({ min: 1, max: 500 }),
  regex: (v: string) => {
    if (!v.trim()) return 'Required.';
    if (!/\(\?<ip>/.test(v)) return 'Include a named group for the address: (?<ip>…)';
    try {
      new RegExp(v);
      return null;
    } catch {
      return 'Not a valid regular expression.';
    }
  },
  threshold: whole('Hits'),
  window_s: whole('Window'),
  ban_s: whole('Ban'),
};

export type BlockPatternValues = Record<keyof typeof blockPatternInput, string>;

export const checkBlockPattern = (values: BlockPatternValues) => parse(blockPatternInput, values);

export const toBlockPattern = (v: BlockPatternValues) => ({
  name: v.name,
  file: v.file,
  regex: v.regex,
  threshold: Number(v.threshold),
  window_s: Number(v.window_s),
  ban_s: Number(v.ban_s),
});
