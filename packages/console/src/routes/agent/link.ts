import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { errorCodeFor } from '@palisade/protocol';
import { LINK_MAX_FRAME_BYTES, LINK_PATH } from '@palisade/protocol/link';
import type { FastifyInstance } from 'fastify';
import { WebSocketServer } from 'ws';

/** Answers an upgrade that is refused as the API answers: `{error, code}` JSON, then the socket is closed. */
function refuse(socket: Duplex, status: number, reason: string, error: string) {
  const body = JSON.stringify({ error, code: errorCodeFor(status) });
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json; charset=utf-8\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\ncache-control: no-store\r\nconnection: close\r\n\r\n${body}`,
  );
}

/**
 * `GET /api/agent/link` upgraded to a WebSocket: an agent with `console.connect = outbound` keeps it
 * open, authenticated with its daemon token, and this process sends that server's calls down it
 * (docs/agent.md, "Outbound link"; the frames: packages/protocol/src/link.ts). The token is checked
 * before the upgrade: a refused one is a 401 and no WebSocket.
 */
export function registerLinkEndpoint(app: FastifyInstance) {
  const wss = new WebSocketServer({ noServer: true, maxPayload: LINK_MAX_FRAME_BYTES, perMessageDeflate: false });
  const links = app.services.servers.links;

  async function upgrade(req: IncomingMessage, socket: Duplex, head: Buffer) {
    socket.on('error', () => socket.destroy());
    const path = (req.url ?? '/').split('?')[0];
    if (path !== LINK_PATH) return refuse(socket, 404, 'Not Found', 'not found');
    if (req.method !== 'GET') return refuse(socket, 405, 'Method Not Allowed', `method ${req.method} not allowed`);
    if (String(req.headers.upgrade ?? '').toLowerCase() !== 'websocket')
      return refuse(socket, 400, 'Bad Request', 'upgrade: expected websocket');
    const match = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
    if (!match) return refuse(socket, 401, 'Unauthorized', 'missing daemon token: send Authorization: Bearer dmn_…');
    const server = await app.services.servers.forDaemonToken(match[1]!);
    if (!server) return refuse(socket, 401, 'Unauthorized', 'invalid daemon token');
    wss.handleUpgrade(req, socket, head, (ws) => {
      links.attach(server.id, server.name, ws, (level, message) => app.log[level]({ server_id: server.id }, message));
      app.services.servers
        .linkOpened(server)
        .catch((err: unknown) => app.log.warn({ err }, 'link health check failed'));
    });
  }

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
