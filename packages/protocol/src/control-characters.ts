// Needs no zod, so the agent imports it too (@palisade/protocol/control-characters).

/**
 * Control characters never belong in a name, a reason or a kind a user or an agent sends: a CR/LF
 * forges lines in audit summaries and agent notes, a NUL is refused by PostgreSQL's text type
 * (docs/security.md, "Control characters"). Tabs, line breaks, C0, DEL, C1, the Unicode line
 * and paragraph separators, and the bidirectional embeddings, overrides and isolates (U+202A–U+202E,
 * U+2066–U+2069, which make a name read backwards in a list, an e-mail or a log) are all refused.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
export const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

export const NO_CONTROL_CHARACTERS_MESSAGE =
  'expected no control characters (line breaks, tabs, \\x00-\\x1f, \\x7f-\\x9f, bidirectional controls U+202A-U+202E, U+2066-U+2069)';

/** True when `text` holds a control character (CONTROL_CHARACTERS). */
export function hasControlCharacters(text: string): boolean {
  return CONTROL_CHARACTERS.test(text);
}
