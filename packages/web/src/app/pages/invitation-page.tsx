import type { Me } from '@palisade/protocol';
import { useNavigate } from 'react-router';
import { meKey } from '../../features/auth/api/get-me';
import { AcceptInvitation } from '../../features/teams/components/accept-invitation';
import { setRequestTeam } from '../../lib/api';
import { setQueryData } from '../../lib/query';
import { teamAddress } from '../../lib/team';
import { useTitle } from '../use-title';

/** The token of `/dashboard/invitations/<token>`, else null. */
export function invitationToken(path: string): string | null {
  const match = /^\/dashboard\/invitations\/([\w-]{1,200})\/?$/.exec(path);
  return match?.[1] ?? null;
}

/** Joining a team by its link; the person then lands in that team (its id in the address). */
export function AcceptInvitationPage({ token, me }: { token: string; me: Me | null }) {
  useTitle('Invitation');
  const navigate = useNavigate();
  return (
    <div className="auth-page">
      <AcceptInvitation
        token={token}
        me={me}
        onJoined={(out) => {
          setRequestTeam(out.team.id);
          setQueryData(meKey, out.account);
          navigate(teamAddress('/dashboard', out.team.id), { replace: true });
        }}
      />
    </div>
  );
}
