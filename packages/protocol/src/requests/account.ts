import { z } from 'zod';
import { plainText } from '../text.js';
import { codeField, currentPasswordField, httpUrlField, newPasswordField } from './fields.js';

/** `POST /api/auth/register`. */
export const registerRequest = z.object({
  email: z.email('expected an email address').max(254, 'at most 254 characters'),
  password: newPasswordField,
  name: plainText(z.string()).trim().min(1, 'must not be empty').max(100, 'at most 100 characters'),
});
export type RegisterRequest = z.input<typeof registerRequest>;

/** `POST /api/auth/login`: any email and password; a wrong pair is a 401, not a 400. */
export const loginRequest = z.object({
  email: z.string().max(254, 'at most 254 characters'),
  password: z.string().max(1024, 'at most 1024 characters'),
});
export type LoginRequest = z.input<typeof loginRequest>;

/** `POST /api/auth/login/two-factor`: the challenge the login answered and the code. */
export const twoFactorLoginRequest = z.object({
  challenge: z.string().min(1, 'must not be empty').max(100, 'at most 100 characters'),
  code: codeField,
});
export type TwoFactorLoginRequest = z.input<typeof twoFactorLoginRequest>;

/** `POST /api/account/password`. */
export const changePasswordRequest = z.object({ old_password: currentPasswordField, new_password: newPasswordField });
export type ChangePasswordRequest = z.input<typeof changePasswordRequest>;

/** Account deletion and two-factor set-up: the password again. */
export const passwordRequest = z.object({ password: currentPasswordField });
export type PasswordRequest = z.input<typeof passwordRequest>;

/** Turning two-factor on: the first code. */
export const codeRequest = z.object({ code: codeField });
export type CodeRequest = z.input<typeof codeRequest>;

/** Turning two-factor off or new recovery codes: the password or a code. */
export const proofRequest = z.object({ password: currentPasswordField.optional(), code: codeField.optional() });
export type ProofRequest = z.input<typeof proofRequest>;

/** `PUT /api/account/webhook`. */
export const webhookRequest = z.object({ url: httpUrlField });
export type WebhookRequest = z.input<typeof webhookRequest>;
