import { type FormEvent, useState } from 'react';
import { Button } from '../../../components/buttons';
import { TextField } from '../../../components/field';
import { ErrorNote, StatusLine } from '../../../components/states';
import type { Errors } from '../../../lib/schema';
import { type ChangePasswordInput, checkChangePassword, useChangePassword } from '../api/change-password';

const EMPTY: ChangePasswordInput = { old_password: '', new_password: '', repeat: '' };

/** Change the password: the current one first; every other browser is signed out. */
export function PasswordPanel() {
  const [values, setValues] = useState<ChangePasswordInput>(EMPTY);
  const [errors, setErrors] = useState<Errors<keyof ChangePasswordInput>>({});
  const [status, setStatus] = useState('');
  const mutation = useChangePassword();

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const checked = checkChangePassword(values);
    if (!checked.ok) return setErrors(checked.errors);
    setErrors({});
    setStatus('');
    const out = await mutation.run(values);
    if (out) {
      setValues(EMPTY);
      setStatus(
        out.sessions_ended === 0
          ? 'Password changed.'
          : `Password changed. ${out.sessions_ended} other ${out.sessions_ended === 1 ? 'session was' : 'sessions were'} signed out.`,
      );
    }
  };

  return (
    <form className="stack narrow-form" onSubmit={(e) => void submit(e)} noValidate aria-label="Change password">
      <TextField
        label="Current password"
        type="password"
        autoComplete="current-password"
        value={values.old_password}
        error={errors.old_password}
        onChange={(e) => setValues({ ...values, old_password: e.target.value })}
      />
      <TextField
        label="New password"
        type="password"
        autoComplete="new-password"
        hint="8 to 256 characters. Other browsers signed in to this account are signed out."
        value={values.new_password}
        error={errors.new_password}
        onChange={(e) => setValues({ ...values, new_password: e.target.value })}
      />
      <TextField
        label="New password again"
        type="password"
        autoComplete="new-password"
        value={values.repeat}
        error={errors.repeat}
        onChange={(e) => setValues({ ...values, repeat: e.target.value })}
      />
      <ErrorNote message={mutation.error} />
      {status ? <StatusLine>{status}</StatusLine> : null}
      <div>
        <Button type="submit" variant="primary" busy={mutation.pending}>
          Change password
        </Button>
      </div>
    </form>
  );
}
