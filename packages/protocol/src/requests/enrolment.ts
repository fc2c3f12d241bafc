import { z } from 'zod';
import { ENROLMENT_MAX_USES } from '../enrolment.js';
import { plainText } from '../text.js';
import { epochMsField, idField } from './fields.js';

/** `POST /api/enrolment-tokens` (docs/api.md, "Enrolment tokens"). */
export const createEnrolmentTokenRequest = z
  .object({
    product_id: idField,
    /** How many servers may register with it (default 1). */
    max_uses: z
      .number('expected an integer')
      .int('expected an integer')
      .min(1, 'at least 1')
      .max(ENROLMENT_MAX_USES, `at most ${ENROLMENT_MAX_USES}`)
      .optional(),
    /** When it stops working (epoch ms); default one hour from now, at most a year. */
    expires_at: epochMsField.optional(),
    name: plainText(z.string('expected a string')).trim().max(100, 'at most 100 characters').optional(),
  })
  .strict();
export type CreateEnrolmentTokenRequest = z.input<typeof createEnrolmentTokenRequest>;
