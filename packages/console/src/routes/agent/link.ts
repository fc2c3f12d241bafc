import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import proxyAddr from '@fastify/proxy-addr';
import { errorCodeFor } from '@palisade/protocol';
import { LINK_MAX_FRAME_BYTES, LINK_PATH } from '@palisade/protocol/link';
import type { FastifyInstance } from 'fastify';
import { WebSocketServer } from 'ws';
import { proxyTrust } from '../../config.js';
import { badRequest } from '../../errors.js';
import { hostPolicy } from '../../plugins/host-guard.js';
import type { LimitVerdict } from '../../plugins/rate-limits.js';

/** Answers an upgrade that is refused as the API answers: `{error, code}` JSON, then the socket is closed. */
function refuse(socket: Duplex, status: number, reason: string, error: string, headers = '') {
  const body = JSON.stringify({ error, code: errorCodeFor(status) });
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json; charset=utf-8\r\n${headers}` +
      `content-length: ${Buffer.byteLength(body)}\r\ncache-control: no-store\r\nconnection: close\r\n\r\n${body}`,
  );
}

/**
 * The address an upgrade comes from, as Fastify's `request.ip` says it: the same proxy-addr with the
 * same trust function (config.ts, proxyTrust): the TCP peer, or behind a trusted proxy
 * (PALISADE_TRUST_PROXY) the nearest X-Forwarded-For hop not trusted.
 */
function addressOf(trust: ReturnType<typeof proxyTrust>) {
  return (req: IncomingMessage): string => (trust ? proxyAddr(req, trust) : (req.socket.remoteAddress ?? ''));
}

/** The `Host` header's name without its port (`[::1]` kept in brackets), as Fastify's `request.hostname`. */
function hostnameOf(req: IncomingMessage): string {
  const host = String(req.headers.host ?? '');
  return host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : (host.split(':')[0] ?? '');
}

/** A 429 as the API's limits answer it, with `retry-after`. */
function tooMany(socket: Duplex, verdict: LimitVerdict, what: string) {
  refuse(
    socket,
    429,
    'Too Many Requests',
    `too many link upgrades ${what}: at most ${verdict.limit} a minute; try again in ${verdict.resetS} s`,
    `retry-after: ${verdict.resetS}\r\nx-ratelimit-limit: ${verdict.limit}\r\nx-ratelimit-remaining: 0\r\n`,
  );
}

/**
 * `GET /api/agent/link` upgraded to a WebSocket: an agent with `console.connect = outbound` keeps it
 * open, authenticated with its daemon token, and this process sends that server's calls down it
 * (docs/agent.md, "Outbound link"; the frames: packages/protocol/src/link.ts). The token is checked
 * before the upgrade: a refused one is a 401 and no WebSocket. The upgrade happens before Fastify's
 * routes, so it applies the host guard itself (plugins/host-guard.ts: 421 for a name the operator
 * did not choose) and counts its own limits (plugins/rate-limits.ts): refused tokens per source address,
 * accepted ones per server. Only a server its account made `outbound` may open one (409 otherwise),
 * and nothing goes down it before it proved it holds the agent key (services/servers/agents.ts, links.ts).
 */
export function registerLinkEndpoint(app: FastifyInstance) {
  const wss = new WebSocketServer({ noServer: true, maxPayload: LINK_MAX_FRAME_BYTES, perMessageDeflate: false });
  const links = app.services.agents.links;
  const clientAddress = addressOf(proxyTrust(app.config.trustProxy));
  const hosts = hostPolicy(app.config);

  async function upgrade(req: IncomingMessage, socket: Duplex, head: Buffer) {
    socket.on('error', () => socket.destroy());
    const path = (req.url ?? '/').split('?')[0];
    if (!hosts.allows(hostnameOf(req)))
      return refuse(socket, 421, 'Misdirected Request', `host: this console answers to ${hosts.expected}`);
    if (path !== LINK_PATH) return refuse(socket, 404, 'Not Found', 'not found');
    if (req.method !== 'GET') return refuse(socket, 405, 'Method Not Allowed', `method ${req.method} not allowed`);
    if (String(req.headers.upgrade ?? '').toLowerCase() !== 'websocket')
      return refuse(socket, 400, 'Bad Request', 'upgrade: expected websocket');
    // The token first: only refused upgrades count against their address, so others' bad tokens
    // never lock out a valid agent behind the same address (a NAT); a valid one counts per server.
    const match = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
    const server = match ? await app.services.servers.forDaemonToken(match[1]!) : null;
    if (!server) {
      const byAddress = await app.limits.consume('link', clientAddress(req));
      if (!byAddress.allowed) return tooMany(socket, byAddress, 'with a refused token from this address');
      if (!match) return refuse(socket, 401, 'Unauthorized', 'missing daemon token: send Authorization: Bearer dmn_…');
      return refuse(socket, 401, 'Unauthorized', 'invalid daemon token');
    }
    const byServer = await app.limits.consume('link_server', String(server.id));
    if (!byServer.allowed) return tooMany(socket, byServer, 'for this server');
    // Only the account switches a server to its link (PUT /api/servers/<id>/connection), never a link.
    if (server.connect !== 'outbound')
      return refuse(
        socket,
        409,
        'Conflict',
        'connect: this server is reached directly; its account switches it to outbound on the console first',
      );
    wss.handleUpgrade(req, socket, head, (ws) => {
      links.open(
        server,
        ws,
        (level, message) => app.log[level]({ server_id: server.id }, message),
        (err) => app.log.warn({ err }, 'link health check failed'),
      );
    });
  }

  // A plain GET (no Upgrade header) reaches Fastify: a 400 naming the missing header, not a 404.
  app.get(LINK_PATH, async () => {
    throw badRequest('upgrade: expected Upgrade: websocket (this is the outbound link of an agent, docs/agent.md)');
  });

  app.server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    upgrade(req, socket, head).catch((err: unknown) => {
      app.log.error({ err }, 'agent link upgrade failed');
      refuse(socket, 500, 'Internal Server Error', 'internal error; the console log has the details');
    });
  });
  app.addHook('onClose', async () => {
    links.closeAll();
    wss.close();
  });
}
