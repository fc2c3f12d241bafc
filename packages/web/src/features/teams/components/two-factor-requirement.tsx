import { useState } from 'react';
import { Link } from 'react-router';
import { ConfirmDialog } from '../../../components/confirm-dialog';
import { RoleNote } from '../../../components/role-note';
import { ErrorNote, StatusLine } from '../../../components/states';
import { useCan, useCurrentTeam } from '../../../lib/team';
import { useMembersPage, useMembersWithoutTwoFactor } from '../api/members';
import { useSetTeamSettings } from '../api/teams';

const members = (n: number) => `${n} ${n === 1 ? 'member' : 'members'}`;

/**
 * The team's "require two-factor sign-in" switch (docs/teams.md, "Requiring two-factor sign-in"):
 * shown to every member, on only for a role with `security.write` (owners). Before it changes it
 * says who is affected (the members list has their two-factor) and asks; then it says the result.
 */
export function TwoFactorRequirement({ selfId }: { selfId: number }) {
  const team = useCurrentTeam();
  const can = useCan('security.write');
  const all = useMembersPage('', null);
  const lacking = useMembersWithoutTwoFactor();
  const [asking, setAsking] = useState<boolean | null>(null);
  const [status, setStatus] = useState('');
  const save = useSetTeamSettings();
  if (!team) return null;
  const without = lacking.data?.members ?? [];
  const withoutCount = lacking.data?.total ?? without.length;
  // Among the first 200 without it; beyond them the console's 409 says so.
  const selfWithout = without.some((m) => m.person_id === selfId);
  const on = team.require_two_factor;
  // The console refuses an owner without it (409): turning it on would lock them out of the team.
  const selfFirst = can && !on && selfWithout;
  const noteId = 'require-two-factor-note';
  const selfNoteId = 'require-two-factor-self';
  return (
    <div className="stack">
      <label className="switch-row">
        <input
          type="checkbox"
          className="switch-box"
          role="switch"
          checked={on}
          aria-checked={on}
          disabled={!can || save.pending || selfFirst}
          aria-describedby={can ? (selfFirst ? selfNoteId : undefined) : noteId}
          onChange={(e) => {
            setStatus('');
            setAsking(e.target.checked);
          }}
        />{' '}
        Require two-factor sign-in for every member
      </label>
      <RoleNote permission="security.write" doing="require two-factor sign-in" id={noteId} />
      {selfFirst ? (
        <p className="muted" id={selfNoteId}>
          Turn on two-factor sign-in for your own account first (
          <Link to="/dashboard/settings/account">Settings → Account</Link>); then you can require it of the team.
        </p>
      ) : null}
      {all.data && lacking.data ? (
        <p className="muted">
          {withoutCount === 0
            ? 'Every member has two-factor sign-in on.'
            : `${withoutCount} of ${members(all.data.total)} ${withoutCount === 1 ? 'does' : 'do'} not have two-factor sign-in yet${selfWithout ? ' (you included)' : ''}.`}
        </p>
      ) : null}
      {status ? <StatusLine>{status}</StatusLine> : null}
      <ErrorNote message={save.error} />
      {asking !== null ? (
        <ConfirmDialog
          title={
            asking
              ? `Require two-factor sign-in in ${team.name}?`
              : `Stop requiring two-factor sign-in in ${team.name}?`
          }
          confirmLabel={asking ? 'Require two-factor sign-in' : 'Stop requiring it'}
          danger={!asking}
          onCancel={() => setAsking(null)}
          onConfirm={async () => {
            setAsking(null);
            const out = await save.run({ id: team.id, require_two_factor: asking });
            if (!out) return;
            setStatus(
              out.team.require_two_factor
                ? `Two-factor sign-in is now required in ${out.team.name}.${withoutCount ? ` ${members(withoutCount)} without it ${withoutCount === 1 ? 'is' : 'are'} asked to turn it on before anything else.` : ''}`
                : `Two-factor sign-in is no longer required in ${out.team.name}.`,
            );
          }}
        >
          {asking ? (
            <p>
              From their next request, a member without two-factor sign-in is asked to turn it on before anything else
              in {team.name}; their API tokens and signing keys here are refused until they do.{' '}
              {withoutCount === 0
                ? 'Every member has it on already.'
                : `${members(withoutCount)} ${withoutCount === 1 ? 'does' : 'do'} not have it yet${selfWithout ? ', you included' : ''}: ${without
                    .slice(0, 5)
                    .map((m) => m.name)
                    .join(', ')}${withoutCount > 5 ? ` and ${withoutCount - 5} more` : ''}.`}
            </p>
          ) : (
            <p>Members can then act in {team.name} with their password alone.</p>
          )}
        </ConfirmDialog>
      ) : null}
    </div>
  );
}
