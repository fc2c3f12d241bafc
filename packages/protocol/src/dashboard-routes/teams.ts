import type { RequestBodyName } from '../requests/index.js';
import { type DashboardRoute, paging } from './route.js';

/** Teams, their members and invitations (docs/teams.md). */
export const teamRoutes: DashboardRoute[] = [
  {
    method: 'get',
    path: '/api/teams',
    summary: "The signed-in person's teams, with their role in each",
    auth: 'session',
    status: 200,
    answer: 'teams',
    errors: [401],
  },
  {
    method: 'post',
    path: '/api/teams',
    summary: 'Create a team; the caller is its owner',
    auth: 'session',
    status: 201,
    answer: 'team',
    errors: [400, 401],
  },
  {
    method: 'patch',
    path: '/api/teams/{id}',
    summary:
      'Rename the team (settings.write); require two-factor sign-in of every member (security.write: owners with two-factor on themselves, else 409)',
    auth: 'session',
    status: 200,
    answer: 'team',
    errors: [400, 401, 403, 404, 409],
  },
  {
    method: 'delete',
    path: '/api/teams/{id}',
    summary: 'Delete the team and all it owns (team.delete: owners); refused while it has servers',
    auth: 'session',
    status: 200,
    answer: 'deleted',
    errors: [401, 403, 404, 409],
  },
  {
    method: 'get',
    path: '/api/team/members',
    summary:
      'The members of the team the request acts in, oldest membership first, a page at a time: role, two-factor, last activity',
    auth: 'sessionOrSigned',
    status: 200,
    answer: 'members',
    errors: [400, 401, 403, 404],
    query: {
      q: {
        description: 'only members whose name or e-mail holds this text, in any case; at most 100 characters',
        schema: { type: 'string', maxLength: 100 },
      },
      two_factor: {
        description:
          'on: only members who meet a two-factor requirement (a code on, or signing in only through single sign-on); off: only those who do not',
        schema: { type: 'string', enum: ['on', 'off'] },
      },
      ...paging,
    },
  },
  {
    method: 'patch',
    path: '/api/team/members/{personId}',
    summary: "Change a member's role (members.manage); never above one's own, never the last owner's",
    auth: 'sessionOrSigned',
    status: 200,
    answer: 'member',
    errors: [400, 401, 403, 404, 409],
  },
  {
    method: 'delete',
    path: '/api/team/members/{personId}',
    summary: "Remove a member (members.manage), or leave (one's own id); never the last owner",
    auth: 'sessionOrSigned',
    status: 200,
    answer: 'memberRemoved',
    errors: [401, 403, 404, 409],
  },
  {
    method: 'get',
    path: '/api/team/invitations',
    summary: "The team's invitations still waiting (members.manage); never their links",
    auth: 'sessionOrSigned',
    status: 200,
    answer: 'invitations',
    errors: [401, 403, 404],
  },
  {
    method: 'post',
    path: '/api/team/invitations',
    summary:
      'Invite someone (members.manage): the link is in this answer only; mailed when an email is given and SMTP is set up',
    auth: 'sessionOrSigned',
    status: 201,
    answer: 'invitationCreated',
    errors: [400, 401, 403, 404, 409],
  },
  {
    method: 'delete',
    path: '/api/team/invitations/{id}',
    summary: 'Revoke an invitation that was not used yet (members.manage)',
    auth: 'sessionOrSigned',
    status: 200,
    answer: 'revoked',
    errors: [401, 403, 404, 409],
  },
  {
    method: 'get',
    path: '/api/invitations/{token}',
    summary:
      'What an invitation link is: team, role, who invited (no session needed); 410 once used, revoked or expired',
    auth: 'public',
    status: 200,
    answer: 'invitationPreview',
    errors: [404, 410],
  },
  {
    method: 'post',
    path: '/api/invitations/{token}/accept',
    summary: 'Accept: the signed-in person joins, or the body (email, name, password) signs a new person up and in',
    auth: 'public',
    status: 200,
    answer: 'invitationAccepted',
    errors: [400, 404, 409, 410, 429],
  },
];

/** The body each write of this area takes, by `<method> <path>` (schemas in packages/protocol/src/requests). */
export const teamRequestBodies: Record<string, RequestBodyName> = {
  'post /api/teams': 'TeamName',
  'patch /api/teams/{id}': 'TeamSettings',
  'patch /api/team/members/{personId}': 'MemberRole',
  'post /api/team/invitations': 'Invitation',
  'post /api/invitations/{token}/accept': 'AcceptInvitation',
};
