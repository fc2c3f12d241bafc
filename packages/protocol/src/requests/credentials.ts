import { z } from 'zod';
import { nameField } from './fields.js';

/** `POST /api/tokens` (a personal access token `svc_…`) and `POST /api/keys` (an SVC1 key `svck_…`): a name. */
export const createTokenRequest = z.object({ name: nameField });
export type CreateTokenRequest = z.input<typeof createTokenRequest>;

export const createKeyRequest = createTokenRequest;
export type CreateKeyRequest = CreateTokenRequest;
