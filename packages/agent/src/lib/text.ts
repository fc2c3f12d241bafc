/**
 * Control characters as every part refuses them (packages/protocol/src/control-characters.ts, which
 * needs no zod): a name or kind holding one forges lines in logs, notes and audit summaries.
 */
export {
  CONTROL_CHARACTERS,
  hasControlCharacters,
  NO_CONTROL_CHARACTERS_MESSAGE as NO_CONTROL_CHARACTERS,
} from '@palisade/protocol/control-characters';
