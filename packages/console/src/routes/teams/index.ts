import {
  invitationRequest,
  memberRoleRequest,
  registerRequest,
  teamNameRequest,
  teamSettingsRequest,
} from '@palisade/protocol';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { badRequest, notFound } from '../../errors.js';
import {
  readCookie,
  requireSession,
  requireSessionOrSigned,
  SESSION_COOKIE,
  sessionCookie,
  tooManyAttempts,
} from '../../plugins/auth.js';
import { addressKey } from '../../plugins/rate-limits.js';
import { accountView } from '../../services/accounts.service.js';
import { parseInput, parsePage } from '../../validation.js';
import { consoleUrl } from '../console-url.js';

const by = (request: FastifyRequest) => ({ actor: request.account!, ip: request.ip });

/** Signing up through an invitation counts against the registration limit per address (routes/auth). */
async function limitPerIp(request: FastifyRequest, name: 'register') {
  const verdict = await request.server.limits.consume(name, addressKey(request.ip));
  if (!verdict.allowed) throw tooManyAttempts(verdict.resetS);
}

function personIdOf(request: FastifyRequest<{ Params: { personId: string } }>) {
  const { personId } = request.params;
  if (!/^[1-9][0-9]{0,15}$/.test(personId)) throw notFound('member');
  return Number(personId);
}

/**
 * Teams and their members (docs/teams.md). `/api/teams/{id}` acts in the team its id names (the
 * session must be a member there, else 404); `/api/team/…` in the team the request acts in.
 */
export default async function teamRoutes(app: FastifyInstance) {
  app.get('/api/teams', { preHandler: requireSession, config: { read: 'person' } }, async (request) => ({
    data: { teams: await app.services.teams.list(request.account!.person_id) },
  }));

  app.post('/api/teams', { preHandler: requireSession, config: { permission: 'person' } }, async (request, reply) => {
    const { name } = parseInput(teamNameRequest, request.body, 'body');
    return reply.status(201).send({ data: { team: await app.services.teams.create(by(request), name) } });
  });

  const named = { preHandler: requireSession, config: { teamFromParam: true } } as const;
  app.patch<{ Params: { id: string } }>(
    '/api/teams/:id',
    { ...named, config: { ...named.config, permission: 'settings.write' } },
    async (request) => {
      const settings = parseInput(teamSettingsRequest, request.body, 'body');
      return { data: { team: await app.services.teams.updateSettings(by(request), settings) } };
    },
  );

  app.delete<{ Params: { id: string } }>(
    '/api/teams/:id',
    { ...named, config: { ...named.config, permission: 'team.delete' } },
    async (request) => {
      await app.services.teams.deleteTeam(by(request));
      return { data: { deleted: true } };
    },
  );

  type MembersQuery = { Querystring: { q?: string; two_factor?: string; cursor?: string; limit?: string } };
  app.get<MembersQuery>(
    '/api/team/members',
    { preHandler: requireSessionOrSigned, config: { signed: true } },
    async (request) => ({
      data: await app.services.teams.members(
        request.account!.id,
        { q: memberSearch(request.query.q), twoFactor: twoFactorFilter(request.query.two_factor) },
        parsePage(request.query),
      ),
    }),
  );

  app.patch<{ Params: { personId: string } }>(
    '/api/team/members/:personId',
    { preHandler: requireSessionOrSigned, config: { signed: true, permission: 'members.manage' } },
    async (request) => {
      const { role } = parseInput(memberRoleRequest, request.body, 'body');
      return { data: { member: await app.services.teams.setRole(by(request), personIdOf(request), role) } };
    },
  );

  // Removing a member needs members.manage; leaving (one's own id) needs nothing (teams.service.ts).
  app.delete<{ Params: { personId: string } }>(
    '/api/team/members/:personId',
    { preHandler: requireSessionOrSigned, config: { signed: true, permission: 'person' } },
    async (request) => {
      await app.services.teams.removeMember(by(request), personIdOf(request));
      return { data: { removed: true } };
    },
  );
}

/** Invitations (docs/teams.md, "Invitations"): made and revoked by members.manage, looked up and accepted by the link. */
export async function invitationRoutes(app: FastifyInstance) {
  const manage = {
    preHandler: requireSessionOrSigned,
    config: { signed: true, permission: 'members.manage', read: 'members.manage' },
  } as const;

  app.get('/api/team/invitations', manage, async (request) => ({
    data: { invitations: await app.services.invitations.pending(request.account!.id) },
  }));

  app.post('/api/team/invitations', manage, async (request, reply) => {
    const body = parseInput(invitationRequest, request.body, 'body');
    const created = await app.services.invitations.create(by(request), body, consoleUrl(request));
    return reply.status(201).send({ data: created });
  });

  app.delete<{ Params: { id: string } }>('/api/team/invitations/:id', manage, async (request) => {
    if (!/^[1-9][0-9]{0,15}$/.test(request.params.id)) throw notFound('invitation');
    await app.services.invitations.revoke(by(request), Number(request.params.id));
    return { data: { revoked: true } };
  });

  // The accept page asks what the link is before anyone signs in.
  app.get<{ Params: { token: string } }>(
    '/api/invitations/:token',
    { config: { read: 'public' } },
    async (request) => ({ data: { invitation: await app.services.invitations.preview(request.params.token) } }),
  );

  // A signed-in person joins; without a session the body signs a new person up (registerRequest).
  app.post<{ Params: { token: string } }>(
    '/api/invitations/:token/accept',
    { config: { permission: 'public' } },
    async (request, reply) => {
      const sessionId = readCookie(request, SESSION_COOKIE);
      const found = sessionId ? await app.services.accounts.sessionAccount(sessionId) : undefined;
      const signedIn = found && found !== 'not_member' ? found : undefined;
      if (!signedIn) await limitPerIp(request, 'register');
      const who = signedIn
        ? { person: signedIn.person }
        : { signUp: parseInput(registerRequest, request.body ?? {}, 'body') };
      const joined = await app.services.invitations.accept(request.params.token, who, request.ip);
      if (!signedIn) {
        const session = await app.services.accounts.startSession(joined.person.id, joined.teamId, {
          ip: request.ip,
          userAgent: request.headers['user-agent'] ?? null,
        });
        reply.header('set-cookie', sessionCookie(request, session.id, session.maxAgeS));
      }
      const actor = await app.services.accounts.memberActor(joined.teamId, joined.person.id);
      return { data: { account: accountView(actor!), team: joined.team } };
    },
  );
}

/** `?two_factor=on|off`: only members who meet a two-factor requirement, or only those who do not. */
function twoFactorFilter(raw: unknown): boolean | undefined {
  if (raw === undefined) return undefined;
  if (raw === 'on' || raw === 'off') return raw === 'on';
  throw badRequest('two_factor: expected on or off');
}

/** `?q=`: a part of a name or e-mail to look for, at most 100 characters; blank is no search. */
function memberSearch(raw: unknown): string | undefined {
  if (raw === undefined) return undefined;
  if (typeof raw !== 'string' || raw.length > 100)
    throw badRequest('q: expected at most 100 characters of a name or e-mail');
  return raw.trim() || undefined;
}
