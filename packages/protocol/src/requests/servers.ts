import { z } from 'zod';
import { AGENT_URL_EXPECTED, FINGERPRINT_EXPECTED, normalizeFingerprint, parseAgentUrl } from '../agent-address.js';
import { REGISTRATION_CONNECT } from '../enrolment.js';
import { serverTagSchema, serverTagsInput } from '../server-tags.js';
import { plainText } from '../text.js';
import { AGENT_KEY_PATTERN, agentKeyField, agentUrlField, idField, nameField, tlsFingerprintField } from './fields.js';

/** `POST /api/servers`: an agent the console reaches at `api_url`. */
export const addServerRequest = z.object({
  product_id: idField,
  name: nameField,
  api_url: agentUrlField,
  api_key: agentKeyField,
  tls_fingerprint: tlsFingerprintField.nullable().optional(),
});
export type AddServerRequest = z.input<typeof addServerRequest>;

/** `PATCH /api/servers/{id}`: any of the fields, at least one. */
export const updateServerRequest = z
  .object({
    name: nameField.optional(),
    tags: serverTagsInput.optional(),
    api_url: agentUrlField.optional(),
    api_key: agentKeyField.optional(),
    tls_fingerprint: tlsFingerprintField.nullable().optional(),
  })
  .strict()
  .refine((v) => Object.keys(v).length > 0, 'send at least one of name, tags, api_url, api_key, tls_fingerprint');
export type UpdateServerRequest = z.input<typeof updateServerRequest>;

/** `PUT /api/servers/{id}/connection`. */
export const serverConnectionRequest = z
  .object({ mode: z.enum(['direct', 'outbound'], "expected 'direct' or 'outbound'") })
  .strict();
export type ServerConnectionRequest = z.input<typeof serverConnectionRequest>;

/** `GET /api/fleet`'s query: the servers carrying one tag. */
export const fleetTagQuery = z.object({ tag: serverTagSchema.optional() });

/** `POST /api/servers/test` for a saved server; chosen by `server_id`, so errors name the right field. */
export const testSavedServerRequest = z.object({ server_id: z.number().int().positive() }).strict();

/** `POST /api/servers/test` for an address not saved yet. */
export const testAddressRequest = z
  .object({
    api_url: agentUrlField,
    api_key: agentKeyField,
    tls_fingerprint: tlsFingerprintField.nullable().optional(),
  })
  .strict();
export type TestServerRequest = z.input<typeof testSavedServerRequest> | z.input<typeof testAddressRequest>;

/** `POST /api/servers/{id}/benchmarks`. */
export const benchmarkRequest = z.object({ label: nameField });
export type BenchmarkRequest = z.input<typeof benchmarkRequest>;

/**
 * `POST /api/agent/register` with `Authorization: Bearer enr_…`: what `palisade-agent register`
 * sends. The console reaches the agent back at `api_url` when given, else at the request's source
 * address and `port`.
 */
export const agentRegistrationRequest = z
  .object({
    name: plainText(z.string('expected a string'))
      .trim()
      .min(1, 'must not be empty')
      .max(100, 'at most 100 characters'),
    /** The metrics key the agent just made (`agk_…`); the console stores it sealed. */
    api_key: z.string('expected a string').regex(AGENT_KEY_PATTERN, 'expected the agent key (agk_…) the agent made'),
    /** The agent's own address, when the operator named one (`--url`); else null. */
    api_url: z
      .string(AGENT_URL_EXPECTED)
      .trim()
      .refine((v) => parseAgentUrl(v) !== null, AGENT_URL_EXPECTED)
      .nullable(),
    /** The metrics port, for the address the console derives from the request's source IP. */
    port: z.number('expected an integer').int('expected an integer').min(1, 'from 1').max(65535, 'to 65535'),
    /** Whether the agent serves https (`metrics.tls = on`). */
    tls: z.boolean('expected true or false'),
    /** Its certificate's SHA-256, pinned by the console when `tls` is true. */
    tls_fingerprint: z
      .string(FINGERPRINT_EXPECTED)
      .refine((v) => normalizeFingerprint(v) !== null, FINGERPRINT_EXPECTED)
      .transform((v) => normalizeFingerprint(v)!)
      .nullable(),
    version: z.string('expected a string').trim().min(1, 'must not be empty').max(50, 'at most 50 characters'),
    /**
     * How the console is to reach the agent (docs/agent.md, "Outbound link"): `direct` checks /health at
     * the address first (the default when absent); `outbound` skips that check, as the agent's own
     * link will carry every call; `auto` (the install script's default) checks, and registers the
     * agent as `outbound` when the check could not reach it at all.
     */
    connect: z.enum(REGISTRATION_CONNECT, `expected ${REGISTRATION_CONNECT.join(', ')}`).optional(),
  })
  .refine((v) => !v.tls || v.tls_fingerprint !== null, {
    message: 'is required when tls is true',
    path: ['tls_fingerprint'],
  });
export type AgentRegistration = z.input<typeof agentRegistrationRequest>;
