/**
 * Names (servers, tags, rollouts) in the order people expect: numbers by value, so `web-2` comes
 * before `web-10`, letters as the browser's language sorts them. One collator, made once, for every
 * list: `localeCompare` with options makes a new one for each comparison (docs/dashboard.md, "Fleet").
 */
const collator = new Intl.Collator(undefined, { numeric: true });

export const compareNames = (a: string, b: string): number => collator.compare(a, b);
