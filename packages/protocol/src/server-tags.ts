import { z } from 'zod';

/**
 * Server tags (docs/fleet.md, "Tags"): short lowercase words a user groups servers by (`web`,
 * `eu-west`, `db.primary`). The console stores and filters by them; the dashboard edits them.
 */
export const MAX_TAGS_PER_SERVER = 10;
export const TAG_PATTERN = /^[a-z0-9][a-z0-9._-]{0,31}$/;
export const TAG_EXPECTED = 'expected 1 to 32 of a-z 0-9 . _ - starting with a letter or digit';

export const serverTagSchema = z.string().regex(TAG_PATTERN, TAG_EXPECTED);

/** A server's tags as sent by a user: trimmed, lowercased, each once, in the order given. */
export const serverTagsInput = z
  .array(z.string().trim().toLowerCase().pipe(serverTagSchema))
  .max(MAX_TAGS_PER_SERVER, `at most ${MAX_TAGS_PER_SERVER} tags`)
  .transform((tags) => [...new Set(tags)]);
