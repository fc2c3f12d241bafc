import {
  addServerRequest,
  type ControlPath,
  fleetTagQuery,
  isControlPath,
  serverConnectionRequest,
  testAddressRequest,
  testSavedServerRequest,
  updateServerRequest,
} from '@palisade/protocol';
import { controlOperation } from '@palisade/protocol/control-schemas';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, badRequest, notFound } from '../../errors.js';
import { requireAnyCredential, requireSession, requireSessionOrSigned } from '../../plugins/auth.js';
import { HISTORY_RANGES, type HistoryRange } from '../../services/servers/index.js';
import { parseId, parseInput, parsePage } from '../../validation.js';
import { consoleUrl } from '../console-url.js';

function serverId(request: FastifyRequest<{ Params: { id: string } }>): number {
  const id = parseId(request.params.id);
  if (id === null) throw notFound('server');
  return id;
}

/** The `path` query parameter, exactly once, and the rest of the query string to forward. */
/**
 * The agent path and the query to forward: only the parameters the contract gives this path and
 * method (packages/protocol/src/control-schemas.ts), each once, re-encoded; anything else is a 400
 * naming the parameter, so nothing the contract does not know reaches the agent (docs/fleet.md, "Proxies").
 */
function controlTarget(request: FastifyRequest): { path: ControlPath; query: string } {
  const raw = request.url.includes('?') ? request.url.slice(request.url.indexOf('?') + 1) : '';
  const params = new URLSearchParams(raw);
  const paths = params.getAll('path');
  if (paths.length !== 1 || !isControlPath(paths[0]!)) throw badRequest('unknown control path');
  const path = paths[0]!;
  const known = controlOperation(path, request.method)?.query ?? [];
  const forwarded = new URLSearchParams();
  for (const name of new Set(params.keys())) {
    if (name === 'path') continue;
    if (!known.includes(name))
      throw badRequest(
        `${name.slice(0, 40)}: not a parameter of ${request.method} ${path}${known.length > 0 ? ` (it takes ${known.join(', ')})` : ' (it takes none)'}`,
      );
    const values = params.getAll(name);
    if (values.length > 1) throw badRequest(`${name}: given more than once; give it once`);
    forwarded.set(name, values[0]!);
  }
  return { path, query: forwarded.toString() };
}

/** The `error` of an agent's JSON refusal, else a few words of it. */
function agentError(body: Buffer | string): string {
  const text = body.toString();
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed && typeof parsed === 'object' && 'error' in parsed && typeof parsed.error === 'string')
      return parsed.error;
  } catch {}
  return text.slice(0, 200) || 'no reason given';
}

export default async function serverRoutes(app: FastifyInstance) {
  app.get<{ Querystring: { limit?: string; cursor?: string } }>(
    '/api/audit',
    { preHandler: requireSession },
    async (request) => ({ data: await app.services.audit.list(request.account!.id, parsePage(request.query)) }),
  );

  app.get<{ Querystring: { tag?: unknown } }>(
    '/api/servers',
    { preHandler: requireAnyCredential, config: { signed: true } },
    async (request) => {
      const { tag } = parseInput(fleetTagQuery, request.query, 'query');
      return { data: await app.services.servers.fleet(request.account!.id, { tag }) };
    },
  );

  app.get('/api/fleet/trends', { preHandler: requireSession }, async (request) => ({
    data: await app.services.servers.trends(request.account!.id),
  }));

  app.get<{ Params: { id: string } }>(
    '/api/servers/:id',
    { preHandler: requireSessionOrSigned, config: { signed: true } },
    async (request) => {
      return { data: { server: await app.services.servers.get(request.account!.id, serverId(request)) } };
    },
  );

  app.post(
    '/api/servers',
    { preHandler: requireSession, config: { permission: 'servers.write' } },
    async (request, reply) => {
      const body = parseInput(addServerRequest, request.body, 'body');
      const server = await app.services.servers.add(request.account!.id, body, consoleUrl(request));
      return reply.status(201).send({ data: { server } });
    },
  );

  app.post(
    '/api/servers/test',
    { preHandler: requireSession, config: { permission: 'servers.write' } },
    async (request) => {
      const raw = request.body;
      const body =
        raw && typeof raw === 'object' && 'server_id' in raw
          ? parseInput(testSavedServerRequest, raw, 'body')
          : parseInput(testAddressRequest, raw, 'body');
      return { data: await app.services.servers.test(request.account!.id, body) };
    },
  );

  app.patch<{ Params: { id: string } }>(
    '/api/servers/:id',
    { preHandler: requireSession, config: { permission: 'servers.write' } },
    async (request) => {
      const id = serverId(request);
      const body = parseInput(updateServerRequest, request.body, 'body');
      return { data: { server: await app.services.servers.update(request.account!.id, id, body) } };
    },
  );

  app.delete<{ Params: { id: string } }>(
    '/api/servers/:id',
    { preHandler: requireSession, config: { permission: 'servers.write' } },
    async (request) => {
      await app.services.servers.remove(request.account!.id, serverId(request));
      return { data: { deleted: true } };
    },
  );

  app.post<{ Params: { id: string } }>(
    '/api/servers/:id/enrollment',
    { preHandler: requireSession, config: { permission: 'servers.write' } },
    async (request) => ({
      data: await app.services.servers.reissueEnrollment(request.account!, serverId(request), consoleUrl(request)),
    }),
  );

  // How the console reaches the server: the account's decision alone (control.edit), audited.
  app.put<{ Params: { id: string } }>(
    '/api/servers/:id/connection',
    { preHandler: requireSession, config: { permission: 'control.edit' } },
    async (request) => {
      const id = serverId(request);
      const { mode } = parseInput(serverConnectionRequest, request.body, 'body');
      const account = request.account!;
      const { before, name: serverName, server } = await app.services.servers.setConnection(account, id, mode);
      if (before !== mode)
        await app.services.audit.fleet({
          accountId: account.id,
          action: 'server.connection',
          actor: { kind: 'session', id: account.person_id, label: account.email },
          ip: request.ip,
          server: { id, name: serverName },
          method: 'PUT',
          path: 'connection',
          summary: `mode: ${before} → ${mode}`,
          status: 200,
          outcome: 'done',
        });
      return { data: { server } };
    },
  );

  app.get<{ Params: { id: string }; Querystring: { name?: unknown; range?: unknown } }>(
    '/api/servers/:id/section',
    { preHandler: requireSession },
    async (request) => {
      const id = serverId(request);
      const { name: section, range } = request.query;
      if (typeof section !== 'string')
        throw badRequest('name: expected one of overview, score, history, benchmarks, attacks, facts');
      const chosen = range === undefined ? '24h' : range;
      // Own keys only: `__proto__`, `toString` and `constructor` are not ranges.
      if (typeof chosen !== 'string' || !Object.hasOwn(HISTORY_RANGES, chosen))
        throw badRequest('range: expected 1h, 24h, 7d or 30d');
      return { data: await app.services.servers.section(request.account!, id, section, chosen as HistoryRange) };
    },
  );

  app.get<{ Params: { id: string } }>(
    '/api/servers/:id/metrics',
    { preHandler: requireSession },
    async (request, reply) => {
      const answer = await app.services.servers.metrics(request.account!.id, serverId(request));
      return reply.status(answer.status).type(answer.contentType).send(answer.body);
    },
  );

  const control = async (request: FastifyRequest<{ Params: { id: string } }>, reply: FastifyReply) => {
    const id = serverId(request);
    const { path, query } = controlTarget(request);
    const raw = (request as { rawBody?: Buffer }).rawBody;
    const body =
      request.method === 'GET'
        ? undefined
        : (raw ?? (request.body === undefined ? undefined : Buffer.from(JSON.stringify(request.body))));
    if (request.method === 'GET') {
      const answer = await app.services.servers.control(request.account!, id, request.method, path, body, query);
      return reply.status(answer.status).type(answer.contentType).send(answer.body);
    }
    // Every write is in the audit log with what the agent answered, or why it did not get there.
    const account = request.account!;
    let status = 500;
    let outcome = 'the console failed; see its log';
    try {
      const answer = await app.services.servers.control(account, id, request.method, path, body, query);
      status = answer.status;
      outcome = answer.status < 400 ? 'done' : `refused by the agent: ${agentError(answer.body)}`;
      return reply.status(answer.status).type(answer.contentType).send(answer.body);
    } catch (err) {
      if (err instanceof AppError) [status, outcome] = [err.status, err.message];
      throw err;
    } finally {
      await app.services.audit.controlWrite({
        actor: {
          kind: 'session',
          id: account.person_id,
          label: account.email,
          accountId: account.id,
          admin: account.role === 'admin',
        },
        ip: request.ip,
        serverId: id,
        method: request.method,
        path,
        query,
        body,
        status,
        outcome,
      });
    }
  };
  app.route<{ Params: { id: string } }>({
    method: ['GET', 'POST', 'DELETE'],
    url: '/api/servers/:id/control',
    preHandler: requireSession,
    config: { read: 'control.read', permission: 'control.edit' },
    handler: control,
  });
}
