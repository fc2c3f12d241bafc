import { type FormEvent, useState } from 'react';
import { Link } from 'react-router';
import { Button } from '../../../components/buttons';
import { SignUpFields } from '../../../components/sign-up-fields';
import { ErrorNote } from '../../../components/states';
import type { Errors } from '../../../lib/schema';
import { checkRegister, type RegisterInput, useRegister } from '../api/register';

export function RegisterForm({ onRegistered }: { onRegistered: () => void }) {
  const [values, setValues] = useState<RegisterInput>({ name: '', email: '', password: '' });
  const [errors, setErrors] = useState<Errors<keyof RegisterInput>>({});
  const mutation = useRegister(onRegistered);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const checked = checkRegister(values);
    if (!checked.ok) return setErrors(checked.errors);
    setErrors({});
    void mutation.run({ name: values.name.trim(), email: values.email.trim(), password: values.password });
  };

  return (
    <form className="card auth-card" onSubmit={submit} noValidate aria-labelledby="register-title">
      <h1 id="register-title" tabIndex={-1}>
        Create an account
      </h1>
      <SignUpFields values={values} errors={errors} onChange={setValues} />
      <ErrorNote message={mutation.error} />
      <Button type="submit" variant="primary" busy={mutation.pending}>
        {mutation.pending ? 'Creating…' : 'Create account'}
      </Button>
      <p className="muted">
        Have an account? <Link to="/dashboard/sign-in">Sign in</Link>
      </p>
    </form>
  );
}
