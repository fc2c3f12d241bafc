import http from 'node:http';
import https from 'node:https';
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
  enroll: (body: unknown) => void;
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

function send(res: http.ServerResponse, status: number, body: string, type = 'application/json') {
  res.writeHead(status, {
    'content-type': type,
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
  });
  res.end(body);
}

const json = (res: http.ServerResponse, status: number, value: unknown) => send(res, status, JSON.stringify(value));

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

/**
 * Checks the key first (401), then the whitelist (403), then routes. Order matters: without a
 * valid key a client learns nothing, not even whether its address is allowed.
 */
export function authorize(req: http.IncomingMessage, routes: ApiRoutes): void {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
  if (!match) throw new HttpError(401, 'missing agent key: send Authorization: Bearer agk_…');
  if (!routes.keys.matches(match[1]!)) throw new HttpError(401, 'invalid agent key');
  const whitelist = routes.whitelist();
  if (whitelist.length === 0) return;
  const client = parseClientAddress(req.socket.remoteAddress);
  if (!client || !isInside(client, whitelist)) {
    throw new HttpError(403, `address ${client?.text ?? 'unknown'} is not in metrics.whitelist`);
  }
}

async function handle(req: http.IncomingMessage, res: http.ServerResponse, routes: ApiRoutes) {
  authorize(req, routes);
  const path = (req.url ?? '/').split('?')[0]!;
  const route = `${req.method} ${path.length > 1 ? path.replace(/\/+$/, '') : path}`;
  switch (route) {
    case 'GET /health':
      return json(res, 200, routes.health());
    case 'GET /metrics':
      return json(res, 200, routes.metrics());
    case 'GET /metrics/prometheus':
      return send(res, 200, routes.prometheus(), 'text/plain; version=0.0.4; charset=utf-8');
    case 'POST /enroll': {
      let body: unknown;
      try {
        body = JSON.parse(await readBody(req));
      } catch (err) {
        if (err instanceof HttpError) throw err;
        throw new HttpError(400, 'body: expected a JSON object with console_url and token');
      }
      try {
        routes.enroll(body);
      } catch (err) {
        throw new HttpError(400, (err as Error).message);
      }
      return json(res, 200, { enrolled: true });
    }
  }
  if (routes.control) {
    const answer = await routes.control({
      method: req.method ?? 'GET',
      path: path.replace(/^\/+|\/+$/g, ''),
      query: new URLSearchParams((req.url ?? '').split('?')[1] ?? ''),
      body: async () => parseControlBody(await readBody(req, MAX_CONTROL_BODY)),
      client: parseClientAddress(req.socket.remoteAddress)?.text,
    });
    if (answer) return json(res, answer.status, answer.body);
  }
  if (['/health', '/metrics', '/metrics/prometheus', '/enroll'].includes(path)) {
    throw new HttpError(405, `method ${req.method} not allowed on ${path}`);
  }
  throw new HttpError(404, `no route ${req.method} ${path}`);
}

/** The metrics API listener, plain HTTP or TLS. */
export function createApiServer(
  routes: ApiRoutes,
  tls: { key: string; cert: string } | null,
  onError: (err: Error) => void,
): http.Server {
  const listener = (req: http.IncomingMessage, res: http.ServerResponse) => {
    handle(req, res, routes).catch((err: Error) => {
      if (res.headersSent) return res.destroy();
      if (err instanceof HttpError) {
        if (err.close) res.setHeader('connection', 'close');
        return json(res, err.status, { error: err.message });
      }
      onError(err);
      json(res, 500, { error: 'internal error' });
    });
  };
  const server = tls ? https.createServer({ key: tls.key, cert: tls.cert }, listener) : http.createServer(listener);
  server.requestTimeout = 30_000;
  server.headersTimeout = 10_000;
  return server;
}
