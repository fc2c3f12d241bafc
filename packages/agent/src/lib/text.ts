/**
 * Control characters, as packages/protocol/src/text.ts refuses them (that module needs zod, which
 * the agent's bundle leaves out): line breaks, tabs, C0, DEL, C1 and the Unicode line and paragraph
 * separators. A name or kind holding one forges lines in logs, notes and audit summaries.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
export const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

export const NO_CONTROL_CHARACTERS = 'expected no control characters (line breaks, tabs, \\x00-\\x1f, \\x7f-\\x9f)';
