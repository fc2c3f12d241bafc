import { createHash, randomBytes } from 'node:crypto';
import {
  type Invitation,
  type InvitationRequest,
  type RegisterRequest,
  ROLE_RANK,
  type TeamRole,
} from '@palisade/protocol';
import type { Actor, Database, PersonRow } from '../db/schema.js';
import { AppError, conflict, notFound, permissionRequired } from '../errors.js';
import type { Mailer } from '../outbound/mailer.js';
import {
  claimInvitation,
  findInvitationByHash,
  findTeamInvitation,
  insertInvitation,
  isMemberByEmail,
  listPendingInvitations,
  revokeInvitation,
} from '../repositories/invitations.repository.js';
import { findMember, insertTeamMember } from '../repositories/team-members.repository.js';
import type { AccountsService } from './accounts.service.js';
import type { AuditService } from './audit.service.js';
import type { TeamChangeBy } from './teams.service.js';

/** An invitation link works this long (docs/teams.md). */
export const INVITATION_TTL_MS = 7 * 86_400_000;

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** What an invitation link carries: 43 URL-safe characters, 256 bits. */
export const INVITATION_TOKEN = /^[A-Za-z0-9_-]{43}$/;

export interface InvitationsDeps {
  db: Database;
  clock: () => number;
  mailer: Mailer;
  /** Whether PALISADE_SMTP_URL is set: only then is an invitation mailed. */
  mailConfigured: boolean;
  accounts: Pick<AccountsService, 'createPerson'>;
  audit: Pick<AuditService, 'team'>;
}

/** Why a link no longer works, as the accept page and the API say it (410). */
function gone(row: { used_at: number | null; revoked_at: number | null; expires_at: number }, now: number) {
  if (row.used_at !== null) return 'token: this invitation was already used';
  if (row.revoked_at !== null) return 'token: this invitation was revoked';
  if (row.expires_at <= now) return 'token: this invitation has expired';
  return null;
}

/** Invitations to a team (docs/teams.md, "Invitations"). */
export function createInvitationsService({ db, clock, mailer, mailConfigured, accounts, audit }: InvitationsDeps) {
  type Row = Awaited<ReturnType<typeof listPendingInvitations>>[number];
  const view = (
    row: Pick<Row, 'id' | 'email' | 'role' | 'inviter_email' | 'created_at' | 'expires_at'>,
  ): Invitation => ({
    id: Number(row.id),
    email: row.email,
    role: row.role,
    invited_by: row.inviter_email,
    created_at: Number(row.created_at),
    expires_at: Number(row.expires_at),
  });

  /** The invitation behind a link, or 404 (unknown) / 410 naming why it no longer works. */
  async function usable(token: string) {
    if (!INVITATION_TOKEN.test(token)) throw notFound('invitation');
    const row = await findInvitationByHash(db, sha256(token));
    if (!row) throw notFound('invitation');
    const why = gone(row, clock());
    if (why) throw new AppError(410, why);
    return row;
  }

  return {
    async pending(teamId: number): Promise<Invitation[]> {
      return (await listPendingInvitations(db, teamId, clock())).map(view);
    },

    /**
     * A new invitation (members.manage): never a role above the inviter's, never to someone who
     * is a member already. The link is in this answer only; mailed when an address was given and
     * the console sends mail.
     */
    async create(by: TeamChangeBy, input: InvitationRequest, linkBase: string) {
      const actor = by.actor;
      const role = input.role as TeamRole;
      if (ROLE_RANK[role] > ROLE_RANK[actor.team_role])
        throw permissionRequired('members.manage', `role: ${role} is above your own role (${actor.team_role})`);
      const email = input.email?.toLowerCase() ?? null;
      if (email && (await isMemberByEmail(db, actor.id, email)))
        throw conflict(`email: ${email} is already a member of this team`);
      const token = randomBytes(32).toString('base64url');
      const now = clock();
      const row = await insertInvitation(db, {
        account_id: actor.id,
        token_hash: sha256(token),
        email,
        role,
        invited_by: actor.person_id,
        created_at: now,
        expires_at: now + INVITATION_TTL_MS,
        used_at: null,
        used_by: null,
        revoked_at: null,
      });
      const link = `${linkBase}/dashboard/invitations/${token}`;
      let mailed = false;
      if (email && mailConfigured) {
        try {
          await mailer.send({
            to: email,
            subject: `${actor.name} invites you to ${actor.team_name} on Palisade`,
            text: [
              `${actor.name} (${actor.email}) invites you to the team "${actor.team_name}" as ${role}.`,
              '',
              `Accept: ${link}`,
              '',
              `The link works once, until ${new Date(row.expires_at).toUTCString()}.`,
            ].join('\n'),
          });
          mailed = true;
        } catch {
          mailed = false; // the link is in the answer: the inviter can pass it on themselves
        }
      }
      await audit.team({
        accountId: actor.id,
        action: 'invitation.created',
        actor,
        ip: by.ip,
        summary: `${email ?? 'a link'} as ${role}${mailed ? ', mailed' : ''}`,
      });
      return {
        invitation: view({ ...row, inviter_email: actor.email }),
        link,
        mailed,
      };
    },

    async revoke(by: TeamChangeBy, id: number) {
      const teamId = by.actor.id;
      if (!(await revokeInvitation(db, teamId, id, clock()))) {
        const row = await findTeamInvitation(db, teamId, id);
        if (!row) throw notFound('invitation');
        throw conflict(`id: this invitation was already ${row.used_at !== null ? 'used' : 'revoked'}`);
      }
      await audit.team({
        accountId: teamId,
        action: 'invitation.revoked',
        actor: by.actor,
        ip: by.ip,
        summary: `#${id}`,
      });
    },

    /** What the accept page shows; no session needed. */
    async preview(token: string) {
      const row = await usable(token);
      return {
        team: row.team_name,
        role: row.role,
        invited_by: row.inviter_name,
        email: row.email,
        expires_at: Number(row.expires_at),
      };
    },

    /**
     * The signed-in person (or a new one, from `signUp`) joins the team with the invitation's role.
     * The invitation is taken in the same transaction as the membership: used once, even by two
     * accepts at once, and nothing is stored when it is refused.
     */
    async accept(token: string, who: { person: PersonRow } | { signUp: RegisterRequest }, ip: string | null) {
      const row = await usable(token);
      const teamId = Number(row.account_id);
      const now = clock();
      const join = async (trx: Database, person: PersonRow) => {
        if (await findMember(trx, teamId, person.id)) throw conflict('token: you are already a member of this team');
        if (!(await claimInvitation(trx, Number(row.id), person.id, now))) {
          const again = await findInvitationByHash(trx, row.token_hash);
          throw new AppError(410, (again && gone(again, now)) ?? 'token: this invitation was already used');
        }
        await insertTeamMember(trx, {
          account_id: teamId,
          person_id: person.id,
          role: row.role,
          granted: '[]',
          revoked: '[]',
          created_at: now,
        });
      };
      let person: PersonRow;
      if ('person' in who) {
        person = who.person;
        await db.transaction().execute((trx) => join(trx, person));
      } else {
        person = (await accounts.createPerson(who.signUp, join)).person;
      }
      const actor: Pick<Actor, 'person_id' | 'email'> = { person_id: person.id, email: person.email };
      await audit.team({
        accountId: teamId,
        action: 'invitation.accepted',
        actor,
        ip,
        summary: `${person.email} joined as ${row.role}`,
      });
      return {
        person,
        teamId,
        team: {
          id: teamId,
          name: row.team_name,
          role: row.role,
          require_two_factor: row.team_requires_two_factor === 1,
        },
      };
    },
  };
}

export type InvitationsService = ReturnType<typeof createInvitationsService>;
