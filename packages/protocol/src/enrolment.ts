import { z } from 'zod';
import type { createEnrolmentTokenRequest } from './requests/enrolment.js';

/**
 * Enrolment tokens and agent-initiated registration (docs/agent.md, "One-line install";
 * docs/api.md, "Enrolment tokens"). An enrolment token (`enr_…`) lets whoever holds it add servers
 * to one product of the account that made it: once by default, or up to `max_uses` times until
 * `expires_at`. The console keeps its SHA-256 only; the raw value is in the creation answer once.
 */
const id = z.number().int().positive();
const epochMs = z.number().int();

/** Longest life of a token: a year, for unattended fleets; the default is one hour. */
export const ENROLMENT_TTL_MAX_MS = 365 * 24 * 3600_000;
export const ENROLMENT_TTL_DEFAULT_MS = 3600_000;
export const ENROLMENT_MAX_USES = 10_000;

/** Why a token is refused; the 401 names it in `error` and in `reason`. */
export const ENROLMENT_REFUSALS = ['unknown', 'expired', 'used_up', 'revoked'] as const;
export type EnrolmentRefusal = (typeof ENROLMENT_REFUSALS)[number];

/** `POST /api/enrolment-tokens`'s body once checked (packages/protocol/src/requests/enrolment.ts). */
export type CreateEnrolmentToken = z.output<typeof createEnrolmentTokenRequest>;

/** A token as listed: never the token, only its last 4 characters, and how many servers used it. */
export const enrolmentTokenSchema = z.object({
  id,
  product_id: id,
  name: z.string(),
  last4: z.string(),
  max_uses: z.number().int().positive(),
  uses: z.number().int().nonnegative(),
  expires_at: epochMs,
  revoked_at: epochMs.nullable(),
  created_at: epochMs,
  /** `active`, or why it no longer works. */
  state: z.enum(['active', 'expired', 'used_up', 'revoked']),
});
export type EnrolmentToken = z.infer<typeof enrolmentTokenSchema>;

/** The creation answer: the only time the token is sent, with the line to paste on a server. */
export const createdEnrolmentTokenSchema = enrolmentTokenSchema.extend({
  token: z.string(),
  /** The line to paste with sudo (installCommand): it fails when the download fails. */
  command: z.string(),
  /** The same line for a root shell on a host without sudo. */
  root_command: z.string(),
  /** The release public key the line pins (RELEASE_KEY_PATTERN), or null: this console's releases are unsigned. */
  release_key: z.string().nullable(),
});
export type CreatedEnrolmentToken = z.infer<typeof createdEnrolmentTokenSchema>;

/**
 * The line an operator pastes on a server (docs/agent.md, "One-line install"), with `sudo` or for a
 * root shell: the script is saved to a file first and run only when the download worked, so the line
 * fails (and Ansible or cloud-init report it) when the console is down or has no packages, where
 * `curl … | sh` would run an empty script and succeed.
 */
export function installCommand(
  consoleUrl: string,
  token: string,
  asRoot = false,
  releaseKey: string | null = null,
): string {
  const run = asRoot ? 'sh' : 'sudo sh';
  const pin = releaseKey === null ? '' : ` --release-key ${releaseKey}`;
  return `curl -fsSL ${consoleUrl}/install/agent.sh -o palisade-install.sh && ${run} palisade-install.sh --token ${token}${pin}`;
}

/**
 * A release public key as the install line carries it and `release.pub` holds it: the Ed25519 key's
 * 32 raw bytes in base64 (docs/decisions.md, "Signed releases"). Only base64 characters: one sh word.
 */
export const RELEASE_KEY_PATTERN = /^[A-Za-z0-9+/]{43}=$/;
/** The DER prefix of an Ed25519 SubjectPublicKeyInfo; its base64 joined to the key's is the key's PEM body. */
export const ED25519_SPKI_PREFIX_B64 = 'MCowBQYDK2VwAyEA';

// `POST /api/agent/register`'s body is checked by the console and typed for the agent from one schema.
export type { AgentRegistration } from './requests/servers.js';

export const REGISTRATION_CONNECT = ['direct', 'outbound', 'auto'] as const;
export type RegistrationConnect = (typeof REGISTRATION_CONNECT)[number];

/** The answer: the server made and the daemon token the agent checks in with. */
export interface AgentRegistered {
  server_id: number;
  name: string;
  api_url: string;
  daemon_token: string;
  /** How the console reaches it: `outbound` when the agent is to keep its link (`auto` that could not reach it). */
  connect: 'direct' | 'outbound';
}
