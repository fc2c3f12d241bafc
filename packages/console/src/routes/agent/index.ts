import type { FastifyInstance } from 'fastify';
import { unauthorized } from '../../errors.js';

/** Routes agents call with their per-server daemon token (`Authorization: Bearer dmn_…`). */
export default async function agentRoutes(app: FastifyInstance) {
  app.post('/api/agent/checkin', async (request) => {
    const match = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? '');
    if (!match) throw unauthorized('missing daemon token: send Authorization: Bearer dmn_…');
    return { data: await app.services.checkins.checkin(match[1]!, request.body) };
  });
}
