import { z } from 'zod';

export { CONTROL_CHARACTERS, hasControlCharacters, NO_CONTROL_CHARACTERS_MESSAGE } from './control-characters.js';

import { CONTROL_CHARACTERS, NO_CONTROL_CHARACTERS_MESSAGE } from './control-characters.js';

/** A zod string that refuses control characters; chain `.min`/`.max`/`.trim` before passing it. */
export function plainText<S extends z.ZodType<string>>(schema: S) {
  return schema.refine((v) => !CONTROL_CHARACTERS.test(v), NO_CONTROL_CHARACTERS_MESSAGE);
}

/** `plainText(z.string())` for the common case. */
export const plainString = () => plainText(z.string());
