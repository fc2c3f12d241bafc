import type { TwoFactorChallenge } from '@palisade/protocol';
import { type FormEvent, useEffect, useRef, useState } from 'react';
import { Link } from 'react-router';
import { Button } from '../../../components/buttons';
import { TextField } from '../../../components/field';
import { ErrorNote } from '../../../components/states';
import { fieldError, otherError } from '../../../lib/api';
import type { Errors } from '../../../lib/schema';
import { singleSignOnStart, useSingleSignOn } from '../api/get-single-sign-on';
import { checkSignIn, type SignInInput, useSignIn } from '../api/sign-in';
import { checkSignInCode, useSignInCode } from '../api/sign-in-code';

/**
 * E-mail and password, and, when the console has an OpenID provider, "Sign in with <name>": the
 * console sends the browser there and back to `next`; a refusal comes back as `ssoError`.
 */
export function SignInForm({
  onSignedIn,
  next,
  ssoError,
}: {
  onSignedIn: () => void;
  next: string;
  ssoError: string | null;
}) {
  const [values, setValues] = useState<SignInInput>({ email: '', password: '' });
  const sso = useSingleSignOn();
  const [errors, setErrors] = useState<Errors<keyof SignInInput>>({});
  const [challenge, setChallenge] = useState<TwoFactorChallenge | null>(null);
  const mutation = useSignIn(onSignedIn, setChallenge);

  if (challenge)
    return (
      <CodeStep
        challenge={challenge}
        onSignedIn={onSignedIn}
        onRestart={() => {
          setChallenge(null);
          setValues({ ...values, password: '' });
          mutation.reset();
        }}
      />
    );

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const checked = checkSignIn(values);
    if (!checked.ok) return setErrors(checked.errors);
    setErrors({});
    void mutation.run({ email: values.email.trim(), password: values.password });
  };

  return (
    <form className="card auth-card" onSubmit={submit} noValidate aria-labelledby="sign-in-title">
      <h1 id="sign-in-title" tabIndex={-1}>
        Sign in
      </h1>
      {ssoError ? <ErrorNote message={`Single sign-on did not sign you in: ${ssoError}`} /> : null}
      {sso.data?.enabled ? (
        <>
          <a className="button primary" href={singleSignOnStart(next)}>
            Sign in with {sso.data.name}
          </a>
          <p className="muted auth-or">or with your e-mail and password</p>
        </>
      ) : null}
      <TextField
        label="Email"
        type="email"
        autoComplete="username"
        value={values.email}
        error={errors.email}
        onChange={(e) => setValues({ ...values, email: e.target.value })}
      />
      <TextField
        label="Password"
        type="password"
        autoComplete="current-password"
        value={values.password}
        error={errors.password}
        onChange={(e) => setValues({ ...values, password: e.target.value })}
      />
      <ErrorNote message={mutation.error} />
      <Button type="submit" variant="primary" busy={mutation.pending}>
        {mutation.pending ? 'Signing in…' : 'Sign in'}
      </Button>
      <p className="muted">
        No account yet? <Link to="/dashboard/register">Create one</Link>
      </p>
    </form>
  );
}

/** The second step: no session exists until this code is right. */
function CodeStep({
  challenge,
  onSignedIn,
  onRestart,
}: {
  challenge: TwoFactorChallenge;
  onSignedIn: () => void;
  onRestart: () => void;
}) {
  const [code, setCode] = useState('');
  const [error, setError] = useState<string | undefined>();
  const mutation = useSignInCode(onSignedIn);
  const title = useRef<HTMLHeadingElement>(null);
  useEffect(() => title.current?.focus(), []);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const checked = checkSignInCode({ challenge: challenge.challenge, code });
    if (!checked.ok) return setError(checked.errors.code);
    setError(undefined);
    void mutation.run({ challenge: challenge.challenge, code: checked.value.code });
  };

  return (
    <form className="card auth-card" onSubmit={submit} noValidate aria-labelledby="code-title">
      <h1 id="code-title" tabIndex={-1} ref={title}>
        Two-factor code
      </h1>
      <p className="muted">
        Your password was right. Type the 6-digit code your authenticator app shows for Palisade, or one of your
        recovery codes if you do not have the app.
      </p>
      <TextField
        label="Code"
        autoComplete="one-time-code"
        inputMode="text"
        value={code}
        error={error ?? fieldError(mutation.error, 'code')}
        onChange={(e) => setCode(e.target.value)}
      />
      <ErrorNote message={otherError(mutation.error, ['code'])} />
      <Button type="submit" variant="primary" busy={mutation.pending}>
        {mutation.pending ? 'Checking…' : 'Sign in'}
      </Button>
      <p className="muted">
        Code not accepted after several tries?{' '}
        <button type="button" className="button link" onClick={onRestart}>
          Start again with your password
        </button>
      </p>
    </form>
  );
}
