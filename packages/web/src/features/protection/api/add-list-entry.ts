import { z } from 'zod';
import { parse } from '../../../lib/schema';

/** An IPv4 or IPv6 address, with an optional /prefix. The agent checks it again. */
export function ipOrCidr(value: string): string | null {
  const v = value.trim();
  if (!v) return 'Required.';
  const [addr, prefix, extra] = v.split('/');
  if (extra !== undefined) return 'Enter one IP or CIDR, e.g. 203.0.113.7 or 198.51.100.0/24.';
  const v4 = /^(25[0-5]|2[0-4]\d|1?\d?\d)(\.(25[0-5]|2[0-4]\d|1?\d?\d)){3}$/.test(addr ?? '');
  const v6 = !v4 && /^[0-9a-f:.]+$/i.test(addr ?? '') && (addr ?? '').includes(':');
  if (!v4 && !v6) return 'Enter one IP or CIDR, e.g. 203.0.113.7 or 198.51.100.0/24.';
  if (prefix !== undefined) {
    const n = Number(prefix);
    if (!/^\d+$/.test(prefix) || n > (v4 ? 32 : 128)) return `The prefix is 0 to ${v4 ? 32 : 128}.`;
  }
  return null;
}

export const listEntryInput = z.object({
  ip: z
    .string()
    .trim()
    .superRefine((value, ctx) => {
      const problem = ipOrCidr(value);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    }),
  note: z.string().trim().max(200, 'At most 200 characters.'),
  ttl: z.string().trim().regex(/^\d*$/, 'Whole minutes, or empty for no expiry.'),
});

export type ListEntryValues = z.input<typeof listEntryInput>;

/** The agent's list entry: `{ip, note?, ttl_s?}`. */
export function toListEntry(values: ListEntryValues): { ip: string; note?: string; ttl_s?: number } {
  const note = values.note.trim();
  const ttl = values.ttl.trim();
  return { ip: values.ip.trim(), ...(note ? { note } : {}), ...(ttl ? { ttl_s: Number(ttl) * 60 } : {}) };
}

export const checkListEntry = (values: ListEntryValues) => parse(listEntryInput, values);

/** Import text: one IP or CIDR per line (or comma separated); `#` starts a comment. */
export function parseImport(textValue: string): { entries: string[]; invalid: string[] } {
  const entries: string[] = [];
  const invalid: string[] = [];
  for (const raw of textValue.split(/[\n,]/)) {
    const line = raw.replace(/#.*/, '').trim();
    if (!line) continue;
    if (ipOrCidr(line)) invalid.push(line);
    else entries.push(line);
  }
  return { entries, invalid };
}
