import { createHmac } from 'node:crypto';
import * as z from 'zod/mini';

/**
 * The outbound link (docs/agent.md, "Outbound link"): an agent that the console cannot reach keeps one
 * WebSocket to `GET /api/agent/link` on its console, authenticated with its daemon token, and the
 * console sends its calls to the agent's API down it. Every frame is one JSON text message.
 */
export const LINK_PATH = '/api/agent/link';

/** A request body over the link is capped as the console caps a dashboard request body (1 MiB). */
export const LINK_MAX_REQUEST_BODY_BYTES = 1024 * 1024;
/** An answer over the link is capped as a direct answer is (the console's outbound client: 4 MiB). */
export const LINK_MAX_ANSWER_BYTES = 4 * 1024 * 1024;
/** The largest frame either side accepts: a capped answer in base64 (4/3) plus its fields. */
export const LINK_MAX_FRAME_BYTES = Math.ceil((LINK_MAX_ANSWER_BYTES * 4) / 3) + 64 * 1024;
/** Calls waiting for an answer on one link; one more is refused as "the agent unreachable", not queued. */
export const LINK_MAX_IN_FLIGHT = 64;
/** Each side sends a heartbeat this often ... */
export const LINK_HEARTBEAT_MS = 10_000;
/** ... and closes the link when nothing at all arrived for this long. */
export const LINK_DEAD_AFTER_MS = 25_000;

/**
 * The console's challenge on a new link (docs/agent.md, "Outbound link"): nothing else goes down a
 * link until the agent answered it with linkProof(); a link that does not within this long is closed.
 */
export const LINK_PROOF_TIMEOUT_MS = 10_000;
/** The WebSocket close code of a link the console refused (no proof, unsolicited frames); the reason says why. */
export const LINK_REFUSED_CODE = 4403;
/** Heartbeats, challenges and proofs are small: a larger one is not a link frame (the link is closed). */
export const LINK_MAX_SMALL_FRAME_BYTES = 1024;
/** At most this many heartbeats a minute from one side (one every LINK_HEARTBEAT_MS is sent): more closes the link. */
export const LINK_MAX_HEARTBEATS_PER_MINUTE = 3 * (60_000 / 10_000);
/** The shortest heartbeat a side may be set to (PALISADE_LINK_HEARTBEAT_MS, `console.link_heartbeat_ms`). */
export const LINK_HEARTBEAT_MIN_MS = 500;

/** The timers of one side of a link; both sides must be set alike (docs/agent.md, "Outbound link"). */
export interface LinkTimers {
  heartbeatMs: number;
  deadAfterMs: number;
  maxHeartbeatsPerMinute: number;
}

/**
 * The link's timers for a heartbeat of `heartbeatMs` (LINK_HEARTBEAT_MIN_MS to LINK_HEARTBEAT_MS),
 * in the default's proportions: dead after 2.5 heartbeats of silence, at most 3 times the rate sent.
 * Only tests shorten it, so that a cut link is noticed in seconds.
 */
export function linkTimers(heartbeatMs: number = LINK_HEARTBEAT_MS): LinkTimers {
  if (!Number.isInteger(heartbeatMs) || heartbeatMs < LINK_HEARTBEAT_MIN_MS || heartbeatMs > LINK_HEARTBEAT_MS)
    throw new RangeError(`link heartbeat: expected ${LINK_HEARTBEAT_MIN_MS} to ${LINK_HEARTBEAT_MS} ms`);
  return {
    heartbeatMs,
    deadAfterMs: (heartbeatMs * LINK_DEAD_AFTER_MS) / LINK_HEARTBEAT_MS,
    maxHeartbeatsPerMinute: Math.ceil((3 * 60_000) / heartbeatMs),
  };
}
/** What one link may send the console a second; past it the console stops reading the link until the next second. */
export const LINK_MAX_BYTES_PER_SECOND = 8 * 1024 * 1024;
/** Answers to calls that timed out are still expected this long; any other answer to an unknown id closes the link. */
export const LINK_LATE_ANSWER_MS = 60_000;

const id = z.string().check(z.regex(/^[0-9A-Za-z_-]{1,64}$/));
const base64 = z.string().check(z.regex(/^[A-Za-z0-9+/]*={0,2}$/));

/** Console → agent: one call of the agent's API, with the agent key the console holds for it. */
export const linkRequestSchema = z.object({
  type: z.literal('request'),
  id,
  method: z.enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']),
  /** The API path, starting with `/` (`/metrics`, `/blacklist`). */
  path: z.string().check(z.regex(/^\/[^?#\s]{0,500}$/)),
  /** The query string without `?` (`ip=203.0.113.7`), or empty. */
  query: z.string().check(z.maxLength(4000)),
  /** `Authorization: Bearer agk_…` as the direct call sends it: the agent checks it as it checks that one. */
  authorization: z.string().check(z.maxLength(500)),
  /** The JSON body in base64, or null; at most LINK_MAX_REQUEST_BODY_BYTES once decoded. */
  body: z.nullable(base64.check(z.maxLength(Math.ceil((LINK_MAX_REQUEST_BODY_BYTES * 4) / 3) + 4))),
});

/** Agent → console: the agent API's answer to one request. */
export const linkResponseSchema = z.object({
  type: z.literal('response'),
  id,
  status: z.int().check(z.gte(100), z.lte(599)),
  content_type: z.string().check(z.maxLength(200)),
  /** The answer's bytes in base64; at most LINK_MAX_ANSWER_BYTES once decoded. */
  body: base64,
});

/** Agent → console: the answer was larger than LINK_MAX_ANSWER_BYTES and is not sent. */
export const linkTooLargeSchema = z.object({
  type: z.literal('too_large'),
  id,
  bytes: z.int().check(z.gte(0)),
});

/** Either way, every LINK_HEARTBEAT_MS: proof the other side is still there. */
export const linkHeartbeatSchema = z.object({ type: z.literal('heartbeat'), ts: z.number() });

/** Console → agent, first on every link: prove you hold the agent key (linkProof()). */
export const linkChallengeSchema = z.object({
  type: z.literal('challenge'),
  /** 32 random bytes in base64url, new for every link. */
  nonce: z.string().check(z.regex(/^[A-Za-z0-9_-]{43}$/)),
});

/** Agent → console: the answer to the challenge, linkProof() in hex. */
export const linkProofSchema = z.object({
  type: z.literal('proof'),
  proof: z.string().check(z.regex(/^[0-9a-f]{64}$/)),
});

export const linkFrameSchema = z.discriminatedUnion('type', [
  linkRequestSchema,
  linkResponseSchema,
  linkTooLargeSchema,
  linkHeartbeatSchema,
  linkChallengeSchema,
  linkProofSchema,
]);

export type LinkRequest = z.infer<typeof linkRequestSchema>;
export type LinkResponse = z.infer<typeof linkResponseSchema>;
export type LinkTooLarge = z.infer<typeof linkTooLargeSchema>;
export type LinkHeartbeat = z.infer<typeof linkHeartbeatSchema>;
export type LinkChallenge = z.infer<typeof linkChallengeSchema>;
export type LinkProof = z.infer<typeof linkProofSchema>;
export type LinkFrame = z.infer<typeof linkFrameSchema>;

/**
 * The proof that the end of a link holds the agent key: HMAC-SHA256 keyed by the key's SHA-256 (what
 * the agent stores, packages/agent/src/state/agent-key.ts; the console computes it from the key it
 * holds sealed) over the console's challenge. The key itself never crosses the link for this, and a
 * daemon token alone cannot answer it.
 */
export function linkProof(keySha256Hex: string, nonce: string): string {
  return createHmac('sha256', Buffer.from(keySha256Hex, 'hex')).update(`palisade-link-proof-v1:${nonce}`).digest('hex');
}

/** A frame read from the link, or null when the text is not one (the reader drops the link then). */
export function parseLinkFrame(text: string): LinkFrame | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  const parsed = linkFrameSchema.safeParse(value);
  return parsed.success ? parsed.data : null;
}

/** The WebSocket address of the link on a console (`https://c.example` → `wss://c.example/api/agent/link`). */
export function linkUrl(consoleUrl: string): string {
  const url = new URL(LINK_PATH.slice(1), consoleUrl.endsWith('/') ? consoleUrl : `${consoleUrl}/`);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  return url.toString();
}
