import { z } from 'zod';
import { plainText } from '../text.js';
import { idField } from './fields.js';

// A message keeps its line breaks and tabs; NUL and the other control characters are refused (docs/security.md).
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const MESSAGE_CONTROLS = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;

const message = z
  .string()
  .refine((v) => !MESSAGE_CONTROLS.test(v), 'expected no NUL or control characters other than line breaks and tabs')
  .trim()
  .min(1, 'must not be empty')
  .max(10_000, 'at most 10000 characters');

/** `POST /api/tickets`. */
export const openTicketRequest = z.object({
  product_id: idField,
  subject: plainText(z.string()).trim().min(1, 'must not be empty').max(200, 'at most 200 characters'),
  message,
});
export type OpenTicketRequest = z.input<typeof openTicketRequest>;

/** `POST /api/tickets/{id}/messages` and the admins' reply. */
export const ticketReplyRequest = z.object({ message });
export type TicketReplyRequest = z.input<typeof ticketReplyRequest>;
