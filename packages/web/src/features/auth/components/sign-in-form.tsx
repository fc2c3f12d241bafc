import { type FormEvent, useState } from 'react';
import { Link } from 'react-router';
import { Button } from '../../../components/buttons';
import { TextField } from '../../../components/field';
import { ErrorNote } from '../../../components/states';
import type { Errors } from '../../../lib/schema';
import { checkSignIn, type SignInInput, useSignIn } from '../api/sign-in';

export function SignInForm({ onSignedIn }: { onSignedIn: () => void }) {
  const [values, setValues] = useState<SignInInput>({ email: '', password: '' });
  const [errors, setErrors] = useState<Errors<keyof SignInInput>>({});
  const mutation = useSignIn(onSignedIn);

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
