import type { DashboardData, Me, RegisterRequest } from '@palisade/protocol';
import { type FormEvent, useState } from 'react';
import { Link } from 'react-router';
import { Button } from '../../../components/buttons';
import { SignUpFields } from '../../../components/sign-up-fields';
import { ErrorNote, Loading } from '../../../components/states';
import { ApiError, errorText, fieldError, otherError } from '../../../lib/api';
import { dateTime } from '../../../lib/format';
import type { Errors } from '../../../lib/schema';
import { checkSignUp, useAcceptInvitation, useInvitation } from '../api/invitations';

type Accepted = DashboardData<'invitationAccepted'>;

/** What a refused link means for the person holding it: the console's words, then what to do. */
function LinkRefused({ error }: { error: unknown }) {
  const gone = error instanceof ApiError && (error.status === 404 || error.status === 410);
  return (
    <div className="state state-error" role="alert">
      <p>{errorText(error)}</p>
      {gone ? <p>This invitation link cannot be used. Ask whoever invited you for a new link.</p> : null}
    </div>
  );
}

const SIGN_UP_FIELDS = ['name', 'email', 'password'] as const;

/**
 * `/dashboard/invitations/<token>` (docs/dashboard.md, "Teams"): which team, which role, who
 * invited; signed in, one button joins; signed out, a short sign-up or "sign in first", which comes
 * back here. A used, revoked, expired or unknown link shows the console's message.
 */
export function AcceptInvitation({
  token,
  me,
  onJoined,
}: {
  token: string;
  me: Me | null;
  onJoined: (out: Accepted) => void;
}) {
  const invitation = useInvitation(token);
  const accept = useAcceptInvitation(onJoined);
  const [values, setValues] = useState<RegisterRequest>({ name: '', email: '', password: '' });
  const [errors, setErrors] = useState<Errors<keyof RegisterRequest>>({});
  const [emailTouched, setEmailTouched] = useState(false);

  if (invitation.loading) return <Loading what="Reading the invitation" />;
  if (invitation.error || !invitation.data)
    return (
      <section className="card auth-card" aria-labelledby="invitation-title">
        <h1 id="invitation-title">Invitation</h1>
        <LinkRefused error={invitation.error} />
      </section>
    );
  const inv = invitation.data;
  const email = emailTouched ? values.email : (inv.email ?? values.email);

  const signUp = (event: FormEvent) => {
    event.preventDefault();
    const body = { name: values.name.trim(), email: email.trim(), password: values.password };
    const checked = checkSignUp(body);
    if (!checked.ok) return setErrors(checked.errors);
    setErrors({});
    void accept.run({ token, signUp: body });
  };
  const next = encodeURIComponent(`/dashboard/invitations/${token}`);

  return (
    <section className="card auth-card" aria-labelledby="invitation-title">
      <h1 id="invitation-title">Join {inv.team}</h1>
      <dl className="facts">
        <dt>Team</dt>
        <dd>{inv.team}</dd>
        <dt>Role</dt>
        <dd>{inv.role}</dd>
        <dt>Invited by</dt>
        <dd>{inv.invited_by ?? 'a former member'}</dd>
        <dt>Link expires</dt>
        <dd>{dateTime(inv.expires_at)}</dd>
      </dl>
      {me ? (
        <>
          <p className="muted">Signed in as {me.email}.</p>
          <ErrorNote message={accept.error} />
          <Button variant="primary" busy={accept.pending} onClick={() => void accept.run({ token })}>
            Join {inv.team} as {inv.role}
          </Button>
        </>
      ) : (
        <form onSubmit={signUp} noValidate aria-label="Create your account and join">
          <p>
            Have an account? <Link to={`/dashboard/sign-in?next=${next}`}>Sign in first</Link>, then join.
          </p>
          <p className="muted">New here? Create your account and join in one step.</p>
          <SignUpFields
            values={{ ...values, email }}
            errors={{
              name: errors.name ?? fieldError(accept.error, 'name'),
              email: errors.email ?? fieldError(accept.error, 'email'),
              password: errors.password ?? fieldError(accept.error, 'password'),
            }}
            onChange={(next) => {
              if (next.email !== email) setEmailTouched(true);
              setValues(next);
            }}
          />
          <ErrorNote message={otherError(accept.error, SIGN_UP_FIELDS)} />
          <Button type="submit" variant="primary" busy={accept.pending}>
            Create account and join {inv.team}
          </Button>
        </form>
      )}
    </section>
  );
}
