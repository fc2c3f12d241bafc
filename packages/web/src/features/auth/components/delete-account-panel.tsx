import { type FormEvent, useState } from 'react';
import { Button } from '../../../components/buttons';
import { TextField } from '../../../components/field';
import { ErrorNote } from '../../../components/states';
import { useDeleteAccount } from '../api/delete-account';

/**
 * Deletes the account with its servers, products, tickets, tokens, keys, alerts and sessions. Asks
 * for the password (and a code when two-factor sign-in is on), and for the email typed out.
 */
export function DeleteAccountPanel({ email, needsCode }: { email: string; needsCode: boolean }) {
  const remove = useDeleteAccount();
  const [typed, setTyped] = useState('');
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');
  const [errors, setErrors] = useState<{ typed?: string; password?: string; code?: string }>({});

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const found: typeof errors = {};
    if (typed.trim().toLowerCase() !== email.toLowerCase()) found.typed = `Type ${email} to confirm.`;
    if (!password) found.password = 'Required: your current password.';
    if (needsCode && !code.trim()) found.code = 'Required: a code from your authenticator app, or a recovery code.';
    setErrors(found);
    if (Object.keys(found).length > 0) return;
    void remove.run({ password, ...(needsCode ? { code: code.trim() } : {}) });
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
      <TextField
        label="Current password"
        type="password"
        autoComplete="current-password"
        value={password}
        error={errors.password}
        onChange={(e) => setPassword(e.target.value)}
      />
      {needsCode ? (
        <TextField
          label="Two-factor code"
          autoComplete="one-time-code"
          value={code}
          error={errors.code}
          onChange={(e) => setCode(e.target.value)}
        />
      ) : null}
      <ErrorNote message={remove.error} />
      <div>
        <Button type="submit" variant="danger" busy={remove.pending}>
          Delete my account
        </Button>
      </div>
    </form>
  );
}
