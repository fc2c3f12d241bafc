import { randomBytes } from 'node:crypto';
import { agentRegistrationRequest } from '@palisade/protocol';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { badRequest, unauthorized } from '../../errors.js';
import { bearer } from '../../plugins/auth.js';
import { parseId, parseInput } from '../../validation.js';
import { registerLinkEndpoint } from './link.js';

/** The network benchmark moves payloads of up to this size each way. */
export const PAYLOAD_MAX_BYTES = 32 * 1024 * 1024;

/** An agent route's token, or null when there is none. */
const agentToken = (request: FastifyRequest) => bearer(request) || null;

/** Routes agents call: check-ins with the daemon token (`dmn_…`), benchmark reports with the run token (`bmt_…`). */
export default async function agentRoutes(app: FastifyInstance) {
  registerLinkEndpoint(app);

  app.post('/api/agent/checkin', { config: { permission: 'public' } }, async (request) => {
    const token = agentToken(request);
    if (!token) throw unauthorized('missing daemon token: send Authorization: Bearer dmn_…');
    return { data: await app.services.checkins.checkin(token, request.body) };
  });

  // An agent removing its own server (`palisade-agent uninstall --forget`): the check-in's token.
  app.delete('/api/agent/server', { config: { permission: 'public' } }, async (request) => {
    const token = agentToken(request);
    if (!token) throw unauthorized('missing daemon token: send Authorization: Bearer dmn_…');
    const server = await app.services.servers.forDaemonToken(token);
    if (!server) throw unauthorized('invalid daemon token');
    await app.services.servers.remove(server.account_id, server.id);
    return { data: { deleted: true } };
  });

  // An agent registering itself with an enrolment token (enr_…): docs/agent.md, "One-line install".
  app.post('/api/agent/register', { config: { permission: 'public' } }, async (request, reply) => {
    const token = agentToken(request);
    const body = () => parseInput(agentRegistrationRequest, request.body, 'body');
    const registered = await app.services.enrolment.register(token, body, request.ip);
    return reply.status(201).send({ data: registered });
  });

  const run = (request: FastifyRequest<{ Params: { run: string } }>) =>
    app.services.benchmarks.runForToken(agentToken(request), parseId(request.params.run));

  app.post<{ Params: { run: string } }>(
    '/api/agent/benchmarks/:run/start',
    { config: { permission: 'public' } },
    async (request) => {
      await app.services.benchmarks.start(await run(request));
      return { data: { status: 'running' } };
    },
  );

  app.post<{ Params: { run: string } }>(
    '/api/agent/benchmarks/:run/log',
    { config: { permission: 'public' } },
    async (request) => {
      await app.services.benchmarks.log(await run(request), request.body);
      return { data: { logged: true } };
    },
  );

  app.post<{ Params: { run: string } }>(
    '/api/agent/benchmarks/:run/result',
    { config: { permission: 'public' } },
    async (request) => {
      await app.services.benchmarks.result(await run(request), request.body);
      return { data: { received: true } };
    },
  );

  // Network section: the agent downloads and uploads payloads and times small round trips.
  app.get<{ Params: { run: string }; Querystring: { bytes?: string } }>(
    '/api/agent/benchmarks/:run/payload',
    async (request, reply) => {
      await run(request);
      const bytes = Number(request.query.bytes ?? 1024 * 1024);
      if (!Number.isInteger(bytes) || bytes < 0 || bytes > PAYLOAD_MAX_BYTES) {
        throw badRequest(`bytes: expected a whole number from 0 to ${PAYLOAD_MAX_BYTES}`);
      }
      return reply.type('application/octet-stream').send(randomBytes(bytes));
    },
  );

  app.register(async (upload) => {
    upload.addContentTypeParser(
      'application/octet-stream',
      { parseAs: 'buffer', bodyLimit: PAYLOAD_MAX_BYTES },
      (_req, body, done) => done(null, body),
    );
    upload.post<{ Params: { run: string } }>(
      '/api/agent/benchmarks/:run/payload',
      { bodyLimit: PAYLOAD_MAX_BYTES, config: { permission: 'public' } },
      async (request) => {
        await run(request);
        const body = request.body;
        return { data: { bytes: Buffer.isBuffer(body) ? body.length : 0 } };
      },
    );
  });

  app.get<{ Params: { run: string } }>('/api/agent/benchmarks/:run/ping', async (request) => {
    await run(request);
    return { data: { pong: true } };
  });
}
