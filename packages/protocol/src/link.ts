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

export const linkFrameSchema = z.discriminatedUnion('type', [
  linkRequestSchema,
  linkResponseSchema,
  linkTooLargeSchema,
  linkHeartbeatSchema,
]);

export type LinkRequest = z.infer<typeof linkRequestSchema>;
export type LinkResponse = z.infer<typeof linkResponseSchema>;
export type LinkTooLarge = z.infer<typeof linkTooLargeSchema>;
export type LinkHeartbeat = z.infer<typeof linkHeartbeatSchema>;
export type LinkFrame = z.infer<typeof linkFrameSchema>;

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
