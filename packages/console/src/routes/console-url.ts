import type { FastifyRequest } from 'fastify';

/** The address agents use to reach this console: PALISADE_PUBLIC_URL, else the address the browser used. */
export function consoleUrl(request: FastifyRequest): string {
  return request.server.config.publicUrl ?? `${request.protocol}://${request.headers.host ?? `${request.hostname}`}`;
}
