import { ROLE_RANK, type Team, type TeamMember, type TeamRole } from '@palisade/protocol';
import type { Actor, Database } from '../db/schema.js';
import { conflict, notFound, permissionRequired } from '../errors.js';
import { deleteMemberTokens } from '../repositories/access-tokens.repository.js';
import {
  deleteTeamAndData,
  teamExists,
  teamServerNames,
  updateTeamSettings,
} from '../repositories/accounts.repository.js';
import { findPersonById } from '../repositories/people.repository.js';
import { deleteMemberSessions, moveSessionsOffTeam } from '../repositories/sessions.repository.js';
import { deleteMemberSigningKeys } from '../repositories/signing-keys.repository.js';
import {
  countOwners,
  deleteMember,
  findListedMember,
  findMember,
  insertTeamMember,
  listPersonTeams,
  lockTeam,
  pageTeamMembers,
  setMemberRole,
} from '../repositories/team-members.repository.js';
import type { PageRequest } from '../validation.js';
import { type AccountsService, hasSecondFactor } from './accounts.service.js';
import type { AuditService } from './audit.service.js';
import type { Coherence } from './coherence/index.js';

export interface TeamsDeps {
  db: Database;
  clock: () => number;
  accounts: Pick<AccountsService, 'createTeam'>;
  audit: Pick<AuditService, 'team'>;
  /** Token lookups cached in every process hold the membership: each change to one is published (services/coherence/). */
  changes: Pick<Coherence, 'changed'>;
}

/** Who did it, for the audit log: the person, in words, and where from. */
export interface TeamChangeBy {
  actor: Actor;
  ip: string | null;
}

const isOwner = (role: string) => role === 'owner';

/** Teams and their members (docs/teams.md). */
export function createTeamsService({ db, clock, accounts, audit, changes }: TeamsDeps) {
  const record = (
    by: TeamChangeBy,
    teamId: number,
    action: Parameters<AuditService['team']>[0]['action'],
    summary: string,
  ) => audit.team({ accountId: teamId, action, actor: by.actor, ip: by.ip, summary });

  /**
   * A membership change, in one transaction that holds the team (lockTeam): the member as it is
   * now is read, `change` checks and writes, and the member's sessions acting in the team end and
   * their tokens and signing keys there are revoked; then every process drops what it kept of the
   * team.
   */
  async function changeMembership(
    teamId: number,
    personId: number,
    change: (trx: Database, member: NonNullable<Awaited<ReturnType<typeof findMember>>>) => Promise<boolean>,
  ) {
    const changed = await db.transaction().execute(async (trx) => {
      await lockTeam(trx, teamId);
      const member = await findMember(trx, teamId, personId);
      if (!member) throw notFound('member');
      if (!(await change(trx, member))) return false;
      await endMemberAccess(trx, teamId, personId);
      return true;
    });
    if (changed) await changes.changed(teamId);
    return changed;
  }

  /** What a member held in the team ends with a change to their membership: sessions there, tokens, signing keys. */
  async function endMemberAccess(trx: Database, teamId: number, personId: number) {
    await deleteMemberSessions(trx, teamId, personId);
    await deleteMemberTokens(trx, teamId, personId);
    await deleteMemberSigningKeys(trx, teamId, personId);
  }

  /** The last owner of a team stays one: refused with 409 naming the field. */
  async function keepAnOwner(trx: Database, teamId: number, targetRole: string, field: string) {
    if (isOwner(targetRole) && (await countOwners(trx, teamId)) <= 1)
      throw conflict(`${field}: the team's last owner cannot be demoted or removed; make another member owner first`);
  }

  /** Nobody acts on a member above them, or gives a role above their own (403 naming the field). */
  function requireStanding(by: Actor, targetRole: TeamRole, newRole?: TeamRole) {
    if (ROLE_RANK[targetRole] > ROLE_RANK[by.team_role])
      throw permissionRequired(
        'members.manage',
        `personId: this member is ${targetRole}, above your role (${by.team_role})`,
      );
    if (newRole && ROLE_RANK[newRole] > ROLE_RANK[by.team_role])
      throw permissionRequired('members.manage', `role: ${newRole} is above your own role (${by.team_role})`);
  }

  type ListedRow = NonNullable<Awaited<ReturnType<typeof findListedMember>>>;
  const memberView = (r: ListedRow): TeamMember => {
    const seen = [r.session_seen_at, r.token_used_at].filter((v) => v !== null).map(Number);
    return {
      person_id: Number(r.id),
      name: r.name,
      email: r.email,
      role: r.role,
      two_factor: Number(r.two_factor) === 1,
      last_active_at: seen.length > 0 ? Math.max(...seen) : null,
      joined_at: Number(r.created_at),
    };
  };

  /** A page of the team's members, oldest membership first (docs/teams.md, "Members"). */
  async function members(teamId: number, filter: { q?: string; twoFactor?: boolean }, page: PageRequest) {
    const { items, next_cursor, total } = await pageTeamMembers(db, teamId, filter, page);
    return { members: items.map(memberView), next_cursor, total };
  }

  return {
    async list(personId: number): Promise<Team[]> {
      const rows = await listPersonTeams(db, personId);
      return rows.map((r) => ({
        id: Number(r.id),
        name: r.name,
        role: r.role,
        require_two_factor: Number(r.require_two_factor) === 1,
      }));
    },

    /** A new team with the person as its owner. */
    async create(by: TeamChangeBy, name: string): Promise<Team> {
      const team = await db.transaction().execute((trx) => accounts.createTeam(trx, by.actor.person_id, name));
      await record(by, team.id, 'team.created', `name: ${name}`);
      return { id: team.id, name: team.name, role: 'owner', require_two_factor: false };
    },

    /** The name (settings.write) and whether every member needs two-factor sign-in (security.write: owners). */
    async updateSettings(by: TeamChangeBy, input: { name?: string; require_two_factor?: boolean }): Promise<Team> {
      const teamId = by.actor.id;
      if (input.require_two_factor !== undefined && !by.actor.team_permissions.includes('security.write'))
        throw permissionRequired('security.write', 'require_two_factor: only an owner may change it');
      // As GitHub does for organisations: the owner turning it on has it first, or the next request
      // would lock them out of the team they just secured.
      const self = input.require_two_factor === true ? await findPersonById(db, by.actor.person_id) : undefined;
      if (self && !hasSecondFactor(self))
        throw conflict(
          'require_two_factor: turn on two-factor sign-in for your own account first (Settings → Account), then require it of the team',
        );
      const row = await updateTeamSettings(db, teamId, {
        ...(input.name === undefined ? {} : { name: input.name }),
        ...(input.require_two_factor === undefined ? {} : { require_two_factor: input.require_two_factor ? 1 : 0 }),
      });
      // Every process's cached lookups of the team's tokens carry the name and the requirement.
      await changes.changed(teamId);
      if (input.name !== undefined && input.name !== by.actor.team_name)
        await record(by, teamId, 'team.renamed', `name: ${by.actor.team_name} → ${input.name}`);
      if (input.require_two_factor !== undefined)
        await record(by, teamId, 'team.two_factor', `require_two_factor: ${input.require_two_factor}`);
      return {
        id: teamId,
        name: row.name,
        role: by.actor.team_role,
        require_two_factor: Number(row.require_two_factor) === 1,
      };
    },

    /** The team and all it owns; refused while it has servers, naming them (remove them first). */
    async deleteTeam(by: TeamChangeBy) {
      const teamId = by.actor.id;
      const servers = await teamServerNames(db, teamId);
      if (servers.length > 0) {
        const shown = servers.slice(0, 10).join(', ');
        throw conflict(
          `team: it still has ${servers.length} server(s) (${shown}${servers.length > 10 ? ', …' : ''}); remove them first`,
        );
      }
      await db.transaction().execute(async (trx) => {
        await moveSessionsOffTeam(trx, teamId);
        await deleteTeamAndData(trx, teamId);
      });
      await changes.changed(teamId);
    },

    members,

    /**
     * A new role for a member (members.manage). An owner making another member owner is how
     * ownership passes on; the member's sessions, tokens and keys in the team end with the change.
     */
    async setRole(by: TeamChangeBy, personId: number, role: TeamRole): Promise<TeamMember> {
      const teamId = by.actor.id;
      let summary = '';
      await changeMembership(teamId, personId, async (trx, member) => {
        const current = member.team_role as TeamRole;
        requireStanding(by.actor, current, role);
        if (current === role) return false;
        if (!isOwner(role)) await keepAnOwner(trx, teamId, current, 'role');
        await setMemberRole(trx, teamId, personId, role);
        summary = `${member.email}: ${current} → ${role}`;
        return true;
      });
      if (summary) await record(by, teamId, 'member.role', summary);
      const listed = await findListedMember(db, teamId, personId);
      if (!listed) throw notFound('member');
      return memberView(listed);
    },

    /**
     * The roles a single sign-on gives (docs/teams.md, "Single sign-on"), one team at a time: a
     * membership added, raised or lowered to the role, never the team's last owner lowered; each
     * change is filed under its team naming the person. A team that does not exist is passed over.
     */
    async applyProviderRoles(
      person: { id: number; email: string },
      roles: ReadonlyMap<number, TeamRole>,
      ip: string | null,
    ) {
      for (const [teamId, role] of roles) {
        const summary = await db.transaction().execute(async (trx) => {
          await lockTeam(trx, teamId);
          if (!(await teamExists(trx, teamId))) return null;
          const member = await findMember(trx, teamId, person.id);
          if (!member) {
            await insertTeamMember(trx, {
              account_id: teamId,
              person_id: person.id,
              role,
              granted: '[]',
              revoked: '[]',
              created_at: clock(),
            });
            return `${person.email} joined as ${role}`;
          }
          const current = member.team_role as TeamRole;
          if (current === role) return null;
          if (isOwner(current) && (await countOwners(trx, teamId)) <= 1) return null;
          await setMemberRole(trx, teamId, person.id, role);
          await endMemberAccess(trx, teamId, person.id);
          return `${person.email}: ${current} → ${role}`;
        });
        if (summary === null) continue;
        await changes.changed(teamId);
        await audit.team({
          accountId: teamId,
          action: 'sso.member',
          actor: { person_id: person.id, email: person.email },
          ip,
          summary: `${summary} (the provider's groups)`,
        });
      }
    },

    /** A member removed (members.manage), or leaving (oneself); the last owner stays. */
    async removeMember(by: TeamChangeBy, personId: number) {
      const teamId = by.actor.id;
      const leaving = personId === by.actor.person_id;
      if (!leaving && !by.actor.team_permissions.includes('members.manage')) throw permissionRequired('members.manage');
      let summary = '';
      await changeMembership(teamId, personId, async (trx, member) => {
        const role = member.team_role as TeamRole;
        if (!leaving) requireStanding(by.actor, role);
        await keepAnOwner(trx, teamId, role, 'personId');
        await deleteMember(trx, teamId, personId);
        summary = `${member.email} (${role})`;
        return true;
      });
      await record(by, teamId, leaving ? 'member.left' : 'member.removed', summary);
    },
  };
}

export type TeamsService = ReturnType<typeof createTeamsService>;
