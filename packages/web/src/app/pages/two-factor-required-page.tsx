import { useRef } from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router';
import { useTwoFactor } from '../../features/account/api/two-factor';
import { TwoFactorPanel } from '../../features/account/components/two-factor-panel';
import { useCurrentTeam } from '../../lib/team';
import { useTitle } from '../use-title';
import { safeNext } from './auth-pages';

/** Where the app sends a member whose team requires two-factor sign-in (docs/dashboard.md, "Teams"). */
export const TWO_FACTOR_REQUIRED_PATH = '/dashboard/two-factor-required';

/**
 * Turning two-factor sign-in on before anything else in a team that requires it: the team's name
 * in a banner, the enrolment of Settings → Account, then back to the page the person was sent from
 * (`?next=`). `onEnrolled` lifts the app's redirect once the console has turned it on.
 */
export function TwoFactorRequiredPage({ onEnrolled }: { onEnrolled: () => void }) {
  useTitle('Two-factor sign-in required');
  const team = useCurrentTeam();
  const state = useTwoFactor();
  const [search] = useSearchParams();
  const navigate = useNavigate();
  const next = safeNext(search);
  // Whether it was on when the page opened: turning it on here refreshes the state before the
  // recovery codes show, and the panel must stay to show them.
  const onAtFirst = useRef<boolean | null>(null);
  if (onAtFirst.current === null && state.data) onAtFirst.current = state.data.enabled;
  const already = onAtFirst.current === true;
  return (
    <div className="stack">
      <h1>Two-factor sign-in required</h1>
      <p className="note note-warn" role="alert">
        <strong>{team?.name ?? 'This team'}</strong> requires two-factor sign-in of every member. Turn it on for your
        account before anything else in {team?.name ?? 'the team'}; then you go back to where you were. Your other teams
        stay open: switch to one in the menu.
      </p>
      <section className="card" aria-labelledby="two-factor-title">
        <h2 id="two-factor-title">Two-factor sign-in</h2>
        {already ? (
          <p>
            Two-factor sign-in is on for your account. <Link to={next}>Continue to where you were</Link>
          </p>
        ) : (
          <TwoFactorPanel onEnabled={onEnrolled} onSaved={() => navigate(next, { replace: true })} />
        )}
      </section>
    </div>
  );
}
