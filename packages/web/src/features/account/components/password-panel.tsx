import { type FormEvent, useState } from 'react';
import { Button } from '../../../components/buttons';
import { PasswordField } from '../../../components/field';
import { ErrorNote, StatusLine } from '../../../components/states';
import { fieldError, otherError } from '../../../lib/api';
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
      <PasswordField
        label="Current password"
        purpose="current"
        value={values.old_password}
        error={errors.old_password ?? fieldError(mutation.error, 'old_password')}
        onChange={(e) => setValues({ ...values, old_password: e.target.value })}
      />
      <PasswordField
        label="New password"
        purpose="new"
        hint="Other browsers signed in to this account are signed out."
        value={values.new_password}
        error={errors.new_password ?? fieldError(mutation.error, 'new_password')}
        onChange={(e) => setValues({ ...values, new_password: e.target.value })}
      />
      <PasswordField
        label="New password again"
        purpose="repeat"
        value={values.repeat}
        error={errors.repeat}
        onChange={(e) => setValues({ ...values, repeat: e.target.value })}
      />
      <ErrorNote message={otherError(mutation.error, ['old_password', 'new_password'])} />
      {status ? <StatusLine>{status}</StatusLine> : null}
      <div>
        <Button type="submit" variant="primary" busy={mutation.pending}>
          Change password
        </Button>
      </div>
    </form>
  );
}
