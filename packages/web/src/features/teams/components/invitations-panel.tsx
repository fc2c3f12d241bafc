import type { DashboardData, TeamRole } from '@palisade/protocol';
import { type FormEvent, useState } from 'react';
import { Button, ConfirmButton, CopyButton } from '../../../components/buttons';
import { SelectField, TextField } from '../../../components/field';
import { Empty, ErrorNote, QueryView } from '../../../components/states';
import { fieldError, otherError } from '../../../lib/api';
import { dateTime } from '../../../lib/format';
import { useCurrentTeam } from '../../../lib/team';
import { checkInvitation, useCreateInvitation, usePendingInvitations, useRevokeInvitation } from '../api/invitations';
import { RowError, rolesUpTo } from './members-panel';

type Created = DashboardData<'invitationCreated'>;

/** The link of a new invitation, shown this once with a copy button, and whether the console mailed it. */
function CreatedLink({ created }: { created: Created }) {
  return (
    <div className="note note-ok" role="status">
      <p>
        {created.mailed
          ? `Sent to ${created.invitation.email}. The link, shown only now:`
          : 'Not mailed: send this link yourself. It is shown only now:'}
      </p>
      <p>
        <code className="secret">{created.link}</code> <CopyButton value={created.link} label="Copy link" />
      </p>
      <p className="muted">
        Single use, for the role {created.invitation.role}, until {dateTime(created.invitation.expires_at)}.
      </p>
    </div>
  );
}

/** Invite by e-mail or by link: the role at or below one's own (docs/teams.md, "Invitations"). */
export function InviteForm() {
  const team = useCurrentTeam();
  const roles = rolesUpTo(team?.role);
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<TeamRole>('viewer');
  const [errors, setErrors] = useState<{ email?: string | undefined; role?: string | undefined }>({});
  const create = useCreateInvitation();
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const body = { role, ...(email.trim() ? { email: email.trim() } : {}) };
    const checked = checkInvitation(body);
    if (!checked.ok) return setErrors(checked.errors);
    setErrors({});
    void create.run(body);
  };
  return (
    <form className="stack" onSubmit={submit} noValidate aria-label="Invite a member">
      <div className="grid-2">
        <TextField
          label="Email (optional)"
          type="email"
          hint="With an address and mail set up on the console, the link is sent there; else you copy it."
          value={email}
          error={errors.email ?? fieldError(create.error, 'email')}
          onChange={(e) => setEmail(e.target.value)}
        />
        <SelectField
          label="Role"
          value={role}
          error={errors.role ?? fieldError(create.error, 'role')}
          onChange={(e) => setRole(e.target.value as TeamRole)}
        >
          {roles.map((r) => (
            <option key={r} value={r}>
              {r}
            </option>
          ))}
        </SelectField>
      </div>
      <ErrorNote message={otherError(create.error, ['email', 'role'])} />
      <div>
        <Button type="submit" variant="primary" busy={create.pending}>
          Create invitation
        </Button>
      </div>
      {create.data ? <CreatedLink created={create.data} /> : null}
    </form>
  );
}

function RevokeButton({ id, email }: { id: number; email: string | null }) {
  const revoke = useRevokeInvitation();
  return (
    <>
      <ConfirmButton
        small
        label="Revoke"
        confirmLabel={`Revoke ${email ?? 'this link'}`}
        busy={revoke.pending}
        onConfirm={() => void revoke.run(id)}
      />
      <RowError message={revoke.error} field="id" />
    </>
  );
}

/** The invitations still waiting, each with Revoke. */
export function PendingInvitations() {
  const pending = usePendingInvitations(true);
  return (
    <QueryView query={pending} what="Loading invitations">
      {(invitations) =>
        invitations.length === 0 ? (
          <Empty>No invitations waiting.</Empty>
        ) : (
          <table className="table cards-on-mobile" aria-label="Pending invitations">
            <thead>
              <tr>
                <th scope="col">Email</th>
                <th scope="col">Role</th>
                <th scope="col">Invited by</th>
                <th scope="col">Created</th>
                <th scope="col">Expires</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {invitations.map((i) => (
                <tr key={i.id}>
                  <td data-label="Email">{i.email ?? 'link only'}</td>
                  <td data-label="Role">{i.role}</td>
                  <td data-label="Invited by">{i.invited_by ?? '—'}</td>
                  <td data-label="Created">{dateTime(i.created_at)}</td>
                  <td data-label="Expires">{dateTime(i.expires_at)}</td>
                  <td data-label="">
                    <RevokeButton id={i.id} email={i.email} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )
      }
    </QueryView>
  );
}
