import { type FormEvent, useState } from 'react';
import { Button } from '../../../components/buttons';
import { TextField } from '../../../components/field';
import { ErrorNote } from '../../../components/states';
import { fieldError, otherError } from '../../../lib/api';
import { useDeleteAccount } from '../api/delete-account';
import { singleSignOnStart } from '../api/get-single-sign-on';

/** Where a fresh sign-in to confirm comes back to: this panel (its section's id on the account page). */
export const DELETE_ACCOUNT_RETURN = '/dashboard/settings/account#delete-account';

/**
 * Deletes the account with its servers, products, tickets, tokens, keys, alerts and sessions. Asks
 * for the email typed out, and for the password (and a code when two-factor sign-in is on); a person
 * who signs in only through `provider` confirms with a sign-in there in the last 10 minutes instead.
 */
export function DeleteAccountPanel({
  email,
  needsCode,
  provider,
}: {
  email: string;
  needsCode: boolean;
  /** The provider's name for a person without a password; null for a person with one. */
  provider: string | null;
}) {
  const remove = useDeleteAccount();
  const [typed, setTyped] = useState('');
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');
  const [errors, setErrors] = useState<{ typed?: string; password?: string; code?: string }>({});

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const found: typeof errors = {};
    if (typed.trim().toLowerCase() !== email.toLowerCase()) found.typed = `Type ${email} to confirm.`;
    if (provider === null && !password) found.password = 'Required: your current password.';
    if (needsCode && !code.trim()) found.code = 'Required: a code from your authenticator app, or a recovery code.';
    setErrors(found);
    if (Object.keys(found).length > 0) return;
    void remove.run(provider === null ? { password, ...(needsCode ? { code: code.trim() } : {}) } : {});
  };

  return (
    <form className="stack narrow-form" onSubmit={submit} noValidate aria-label="Delete account">
      <p>
        Deletes this account and everything it owns: servers with their history and benchmarks, products, tickets, API
        tokens and keys, alerts, notifications and every session. This cannot be undone. The agents on your servers keep
        running; uninstall them there.
      </p>
      <TextField
        label="Your email, to confirm"
        autoComplete="off"
        value={typed}
        error={errors.typed}
        onChange={(e) => setTyped(e.target.value)}
      />
      {provider === null ? (
        <TextField
          label="Current password"
          type="password"
          autoComplete="current-password"
          value={password}
          error={errors.password ?? fieldError(remove.error, 'password')}
          onChange={(e) => setPassword(e.target.value)}
        />
      ) : (
        <p>
          You have no password here: confirm by signing in again through {provider}, then delete the account within 10
          minutes.{' '}
          <a className="button small" href={singleSignOnStart(DELETE_ACCOUNT_RETURN)}>
            Sign in again to confirm
          </a>
        </p>
      )}
      {needsCode ? (
        <TextField
          label="Two-factor code"
          autoComplete="one-time-code"
          value={code}
          error={errors.code ?? fieldError(remove.error, 'code')}
          onChange={(e) => setCode(e.target.value)}
        />
      ) : null}
      <ErrorNote message={otherError(remove.error, ['password', 'code'])} />
      <div>
        <Button type="submit" variant="danger" busy={remove.pending}>
          Delete my account
        </Button>
      </div>
    </form>
  );
}
