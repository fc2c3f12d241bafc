import { ROLE_RANK, TEAM_ROLES, type TeamMember, type TeamRole } from '@palisade/protocol';
import { useState } from 'react';
import { ConfirmButton } from '../../../components/buttons';
import { ConfirmDialog } from '../../../components/confirm-dialog';
import { TextField } from '../../../components/field';
import { PageNav } from '../../../components/pager';
import { QueryView } from '../../../components/states';
import { fieldError } from '../../../lib/api';
import { dateTime, timeAgo } from '../../../lib/format';
import { useCan, useCurrentTeam } from '../../../lib/team';
import { MEMBERS_PAGE, useMembersPage, useRemoveMember, useSetMemberRole } from '../api/members';

/** The roles one may give: at or below one's own (docs/teams.md, "Roles"). */
export const rolesUpTo = (role: TeamRole | undefined): TeamRole[] =>
  role ? TEAM_ROLES.filter((r) => ROLE_RANK[r] <= ROLE_RANK[role]) : [];

/** The console's refusal next to the control it is about, in words. */
export function RowError({ message, field }: { message: string | null; field: string }) {
  if (!message) return null;
  return (
    <p className="field-error" role="alert">
      {fieldError(message, field) ?? message}
    </p>
  );
}

function MemberRow({ member, self, onLeft }: { member: TeamMember; self: boolean; onLeft: () => void }) {
  const team = useCurrentTeam();
  const canManage = useCan('members.manage');
  const setRole = useSetMemberRole();
  const remove = useRemoveMember(self ? onLeft : undefined);
  const mine = team?.role;
  const above = mine !== undefined && ROLE_RANK[member.role] > ROLE_RANK[mine];
  const choices = rolesUpTo(mine);
  const [asking, setAsking] = useState<TeamRole | null>(null);
  const who = self ? 'yourself' : member.name;
  const roleNote = !canManage
    ? `${mine ?? 'This role'}s cannot change roles`
    : above
      ? 'Above your role: only a higher role can change it'
      : undefined;
  return (
    <tr>
      <td data-label="Name">
        {member.name}
        {self ? <span className="muted"> (you)</span> : null}
      </td>
      <td data-label="Email">{member.email}</td>
      <td data-label="Role">
        <select
          aria-label={`Role of ${member.email}`}
          value={member.role}
          disabled={!canManage || above || setRole.pending}
          title={roleNote}
          onChange={(e) => setAsking(e.target.value as TeamRole)}
        >
          {(above || !canManage ? [member.role] : choices).map((r) => (
            <option key={r} value={r}>
              {r}
            </option>
          ))}
        </select>
        <RowError message={setRole.error} field="role" />
        {asking ? (
          <ConfirmDialog
            title={`Make ${who} ${asking === 'owner' || asking === 'admin' || asking === 'operator' ? 'an' : 'a'} ${asking}?`}
            confirmLabel={`Make ${asking}`}
            onCancel={() => setAsking(null)}
            onConfirm={() => {
              setAsking(null);
              void setRole.run({ personId: member.person_id, role: asking });
            }}
          >
            <p>
              {self ? 'Your' : `${member.name}'s`} sessions in {team?.name ?? 'this team'} end at once and{' '}
              {self ? 'your' : 'their'} API tokens and signing keys here are revoked: {self ? 'you sign' : 'they sign'}{' '}
              in again and make new ones with the new role. {self ? 'Your' : 'Their'} other teams are not touched.
            </p>
          </ConfirmDialog>
        ) : null}
      </td>
      <td data-label="Two-factor">{member.two_factor ? 'On' : 'Off'}</td>
      <td data-label="Last active">{member.last_active_at ? timeAgo(member.last_active_at) : 'never'}</td>
      <td data-label="Joined">{dateTime(member.joined_at)}</td>
      <td data-label="">
        {self ? (
          <ConfirmButton
            small
            label="Leave team"
            confirmLabel={`Leave ${team?.name ?? 'this team'}`}
            busy={remove.pending}
            onConfirm={() => void remove.run(member.person_id)}
          />
        ) : (
          <ConfirmButton
            small
            label="Remove"
            confirmLabel={`Remove ${member.email}`}
            busy={remove.pending}
            disabled={!canManage || above}
            {...(roleNote ? { title: roleNote } : {})}
            onConfirm={() => void remove.run(member.person_id)}
          />
        )}
        <RowError message={remove.error} field="personId" />
      </td>
    </tr>
  );
}

/**
 * Settings → Members: who is in the team, their role, two-factor and activity; change, remove, leave.
 * The console pages and searches (a large team: e2e/browser/teams.test.ts runs 202 members); the
 * panel keeps the cursors of the pages before for ← Previous.
 */
export function MembersPanel({ selfId, onLeft }: { selfId: number; onLeft: () => void }) {
  const [filter, setFilter] = useState('');
  const [cursors, setCursors] = useState<(string | null)[]>([null]);
  const q = filter.trim();
  const members = useMembersPage(q, cursors.at(-1) ?? null);
  const total = members.data?.total ?? 0;
  return (
    <>
      {q !== '' || total > MEMBERS_PAGE ? (
        <TextField
          label="Find a member"
          type="search"
          value={filter}
          onChange={(e) => {
            setFilter(e.target.value);
            setCursors([null]);
          }}
        />
      ) : null}
      <QueryView query={members} what="Loading members">
        {(page) => {
          const pages = Math.max(1, Math.ceil(page.total / MEMBERS_PAGE));
          const current = cursors.length;
          const turn = (to: number) =>
            setCursors(to > current && page.next_cursor ? [...cursors, page.next_cursor] : cursors.slice(0, to));
          return (
            <>
              <div className="table-scroll">
                <table className="table cards-on-mobile" aria-label="Members">
                  <thead>
                    <tr>
                      <th scope="col">Name</th>
                      <th scope="col">Email</th>
                      <th scope="col">Role</th>
                      <th scope="col">Two-factor</th>
                      <th scope="col">Last active</th>
                      <th scope="col">Joined</th>
                      <th scope="col">
                        <span className="visually-hidden">Actions</span>
                      </th>
                    </tr>
                  </thead>
                  <tbody>
                    {page.members.map((m) => (
                      <MemberRow key={m.person_id} member={m} self={m.person_id === selfId} onLeft={onLeft} />
                    ))}
                  </tbody>
                </table>
              </div>
              {pages > 1 ? (
                <PageNav
                  label="Pages of members"
                  current={current}
                  pages={page.next_cursor ? Math.max(pages, current + 1) : current}
                  onPage={turn}
                >
                  Page {current} of {pages} · {page.total} members
                </PageNav>
              ) : null}
            </>
          );
        }}
      </QueryView>
    </>
  );
}
