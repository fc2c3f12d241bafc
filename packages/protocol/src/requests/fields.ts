import { z } from 'zod';
import { AGENT_URL_EXPECTED, FINGERPRINT_EXPECTED, normalizeFingerprint, parseAgentUrl } from '../agent-address.js';
import { plainText } from '../text.js';

/**
 * The fields several requests share, with the messages the console answers (`<field>: <message>`)
 * and the dashboard shows under the field (packages/web/src/lib/schema.ts).
 */
export const idField = z.number('expected an integer').int('expected an integer').positive('expected a positive id');

/** A label the user chose: a server, token, key, rule or channel name. */
export const nameField = plainText(z.string()).trim().min(1, 'must not be empty').max(100, 'at most 100 characters');

export const epochMsField = z.number('expected epoch milliseconds').int('expected epoch milliseconds');

export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 256;

/** The rule for a password being chosen: at registration and when it is changed (never truncated). */
export const newPasswordField = z
  .string()
  .min(PASSWORD_MIN, `at least ${PASSWORD_MIN} characters`)
  .max(PASSWORD_MAX, `at most ${PASSWORD_MAX} characters`);

/** A password being confirmed: any length the console could have stored. */
export const currentPasswordField = z.string().min(1, 'must not be empty').max(1024, 'at most 1024 characters');

/** A one-time code from an authenticator app, or a recovery code. */
export const codeField = z.string().trim().min(1, 'must not be empty').max(20, 'at most 20 characters');

export const httpUrlField = z
  .string()
  .trim()
  .max(2048, 'at most 2048 characters')
  .url({ protocol: /^https?$/, message: 'expected an http(s) URL' });

// Parsed before anything calls it or logs it (packages/protocol/src/agent-address.ts).
export const agentUrlField = z
  .string(AGENT_URL_EXPECTED)
  .trim()
  .refine((v) => parseAgentUrl(v) !== null, AGENT_URL_EXPECTED);

export const AGENT_KEY_PATTERN = /^agk_[0-9A-Za-z]{20,200}$/;

export const agentKeyField = z
  .string()
  .trim()
  .regex(AGENT_KEY_PATTERN, 'expected the agent key (agk_…) printed by `palisade-agent key`');

// Either spelling the agent or openssl prints; stored and compared in one canonical form.
export const tlsFingerprintField = z
  .string(FINGERPRINT_EXPECTED)
  .refine((v) => normalizeFingerprint(v) !== null, FINGERPRINT_EXPECTED)
  .transform((v) => normalizeFingerprint(v)!);
