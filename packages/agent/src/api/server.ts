import http from 'node:http';
import { isInside, type NetworkRange, parseClientAddress } from '../lib/ip-ranges.js';
import type { KeyCheck } from '../state/agent-key.js';
import { type ControlAnswer, type ControlRequest, parseControlBody } from './control-routes.js';

/** What the metrics API serves; every answer comes from memory. */
export interface ApiRoutes {
  keys: KeyCheck;
  whitelist: () => NetworkRange[];
  health: () => unknown;
  metrics: () => unknown;
  prometheus: () => string;
  /** Validates and stores an enrolment; throws an Error whose message names the bad field. */
  enroll: (body: unknown) => void | Promise<void>;
  /** The protection control API; null when the path is not one of its paths. */
  control?: (request: ControlRequest) => Promise<ControlAnswer | null>;
}

const MAX_BODY = 16 * 1024;
/** Control bodies carry imports of up to 100,000 entries. */
const MAX_CONTROL_BODY = 16 * 1024 * 1024;
/**
 * How much past its limit a body is still read (and thrown away) before the 413 goes out. Closing
 * while the client is still sending makes the kernel reset the connection, and a client busy
 * writing then loses the answer; a client sending more than this gets the 413 and the reset.
 */
const MAX_DRAIN = 32 * 1024 * 1024;

/** An error answered to the client as `{"error": message}`; `close` ends the connection after the answer. */
class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly close = false,
  ) {
    super(message);
  }
}

/** One call of the API, from an HTTP request or from a frame of the outbound link (api/console-link.ts). */
export interface ApiCall {
  method: string;
  /** The path and query (`/blacklist?ip=…`). */
  url: string;
  authorization: string | undefined;
  /** The caller's address as the agent sees it: the whitelist is checked against it. */
  remoteAddress: string | undefined;
  /** The body as text, at most `max` bytes; a larger one rejects with the 413 HttpError. */
  readBody(max: number): Promise<string>;
}

/** What the API answers to one call. */
export interface ApiAnswer {
  status: number;
  type: string;
  body: string;
  /** End the connection after the answer (a body too large to read). */
  close?: boolean;
}

const answer = (status: number, body: string, type = 'application/json'): ApiAnswer => ({ status, type, body });
const json = (status: number, value: unknown) => answer(status, JSON.stringify(value));

/** Reads a body of at most `max` bytes; a larger one is drained (up to MAX_DRAIN more) and answered 413. */
function readBody(req: http.IncomingMessage, max = MAX_BODY): Promise<string> {
  return new Promise((resolve, reject) => {
    const tooLarge = () => new HttpError(413, `body: larger than the ${max} byte limit`, true);
    const declared = Number(req.headers['content-length']);
    if (declared > max + MAX_DRAIN) {
      reject(tooLarge());
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let over = declared > max;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (!over && size <= max) {
        chunks.push(c);
        return;
      }
      over = true;
      chunks.length = 0;
      if (size > max + MAX_DRAIN) reject(tooLarge());
    });
    req.on('end', () => (over ? reject(tooLarge()) : resolve(Buffer.concat(chunks).toString('utf8'))));
    req.on('error', reject);
  });
}

/** A body already in memory (a link frame's), held to the same limit as one read from a socket. */
export function bufferedBody(body: Buffer | null): (max: number) => Promise<string> {
  return async (max) => {
    if (body && body.length > max) throw new HttpError(413, `body: larger than the ${max} byte limit`);
    return body ? body.toString('utf8') : '';
  };
}

/**
 * Checks the key first (401), then the whitelist (403), then routes. Order matters: without a
 * valid key a client learns nothing, not even whether its address is allowed.
 */
export function authorize(call: Pick<ApiCall, 'authorization' | 'remoteAddress'>, routes: ApiRoutes): void {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(call.authorization ?? '');
  if (!match) throw new HttpError(401, 'missing agent key: send Authorization: Bearer agk_…');
  if (!routes.keys.matches(match[1]!)) throw new HttpError(401, 'invalid agent key');
  const whitelist = routes.whitelist();
  if (whitelist.length === 0) return;
  const client = parseClientAddress(call.remoteAddress);
  if (!client || !isInside(client, whitelist)) {
    throw new HttpError(403, `address ${client?.text ?? 'unknown'} is not in metrics.whitelist`);
  }
}

async function route(call: ApiCall, routes: ApiRoutes): Promise<ApiAnswer> {
  authorize(call, routes);
  const path = call.url.split('?')[0]!;
  const key = `${call.method} ${path.length > 1 ? path.replace(/\/+$/, '') : path}`;
  switch (key) {
    case 'GET /health':
      return json(200, routes.health());
    case 'GET /metrics':
      return json(200, routes.metrics());
    case 'GET /metrics/prometheus':
      return answer(200, routes.prometheus(), 'text/plain; version=0.0.4; charset=utf-8');
    case 'POST /enroll': {
      let body: unknown;
      try {
        body = JSON.parse(await call.readBody(MAX_BODY));
      } catch (err) {
        if (err instanceof HttpError) throw err;
        throw new HttpError(400, 'body: expected a JSON object with console_url and token');
      }
      try {
        await routes.enroll(body);
      } catch (err) {
        throw new HttpError(400, (err as Error).message);
      }
      return json(200, { enrolled: true });
    }
  }
  if (routes.control) {
    const answer = await routes.control({
      method: call.method,
      path: path.replace(/^\/+|\/+$/g, ''),
      query: new URLSearchParams(call.url.split('?')[1] ?? ''),
      body: async () => parseControlBody(await call.readBody(MAX_CONTROL_BODY)),
      client: parseClientAddress(call.remoteAddress)?.text,
    });
    if (answer) return json(answer.status, answer.body);
  }
  if (['/health', '/metrics', '/metrics/prometheus', '/enroll'].includes(path)) {
    throw new HttpError(405, `method ${call.method} not allowed on ${path}`);
  }
  throw new HttpError(404, `no route ${call.method} ${path}`);
}

/**
 * The API's one entry point, for the listener and the outbound link alike: the key, the whitelist
 * and every route are checked here, and every failure is an answer (`{"error"}`), never a throw.
 */
export async function handleApiCall(
  call: ApiCall,
  routes: ApiRoutes,
  onError: (err: Error) => void,
): Promise<ApiAnswer> {
  try {
    return await route(call, routes);
  } catch (err) {
    if (err instanceof HttpError) return { ...json(err.status, { error: err.message }), close: err.close };
    onError(err as Error);
    return json(500, { error: 'internal error' });
  }
}

/** The metrics API listener, plain HTTP or TLS. */
export function createApiServer(
  routes: ApiRoutes,
  tls: { key: string; cert: string } | null,
  onError: (err: Error) => void,
): http.Server {
  const listener = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const call: ApiCall = {
      method: req.method ?? 'GET',
      url: req.url ?? '/',
      authorization: req.headers.authorization,
      remoteAddress: req.socket.remoteAddress,
      readBody: (max) => readBody(req, max),
    };
    void handleApiCall(call, routes, onError).then((a) => {
      if (res.headersSent) return res.destroy();
      res.writeHead(a.status, {
        'content-type': a.type,
        'content-length': Buffer.byteLength(a.body),
        'cache-control': 'no-store',
        ...(a.close ? { connection: 'close' } : {}),
      });
      res.end(a.body);
    });
  };
  // node:https only with metrics.tls on: an agent serving plain HTTP never loads TLS.
  const server = tls
    ? process.getBuiltinModule('node:https').createServer({ key: tls.key, cert: tls.cert }, listener)
    : http.createServer(listener);
  server.requestTimeout = 30_000;
  server.headersTimeout = 10_000;
  return server;
}
