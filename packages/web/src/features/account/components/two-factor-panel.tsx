import type { TwoFactorSetup } from '@palisade/protocol';
import { type FormEvent, type ReactNode, useState } from 'react';
import { Button, CopyButton } from '../../../components/buttons';
import { PasswordField, TextField } from '../../../components/field';
import { QrCode } from '../../../components/qr-code';
import { ErrorNote, QueryView, StatusLine } from '../../../components/states';
import { fieldError, otherError } from '../../../lib/api';
import { dateTime } from '../../../lib/format';
import type { MutationState } from '../../../lib/query';
import { useDisableTwoFactor, useEnableTwoFactor, useSetupTwoFactor, useTwoFactor } from '../api/two-factor';

/**
 * Two-factor sign-in (TOTP): on with the password and a code from the app; recovery codes once; off
 * with the password. `onEnabled` hears of it being turned on, `onSaved` of the codes being saved.
 */
export function TwoFactorPanel({ onEnabled, onSaved }: { onEnabled?: () => void; onSaved?: () => void } = {}) {
  const query = useTwoFactor();
  const [codes, setCodes] = useState<string[] | null>(null);
  const [status, setStatus] = useState('');

  if (codes)
    return (
      <RecoveryCodes
        codes={codes}
        onDone={() => {
          setCodes(null);
          onSaved?.();
        }}
      />
    );
  return (
    <div className="stack">
      {status ? <StatusLine>{status}</StatusLine> : null}
      <QueryView query={query} what="Loading two-factor sign-in">
        {(state) =>
          state.enabled ? (
            <TurnOff
              enabledAt={state.enabled_at}
              left={state.recovery_codes_left}
              onOff={() => setStatus('Two-factor sign-in is off. Your password alone signs you in again.')}
            />
          ) : (
            <TurnOn
              onOn={(c) => {
                setStatus('Two-factor sign-in is on.');
                setCodes(c);
                onEnabled?.();
              }}
            />
          )
        }
      </QueryView>
    </div>
  );
}

function TurnOn({ onOn }: { onOn: (codes: string[]) => void }) {
  const setup = useSetupTwoFactor();
  const enable = useEnableTwoFactor();
  const [code, setCode] = useState('');
  const [secret, setSecret] = useState<TwoFactorSetup | null>(null);
  const [error, setError] = useState<string | undefined>();

  const confirm = async (event: FormEvent) => {
    event.preventDefault();
    if (!/^[0-9]{6}$/.test(code.trim())) return setError('Type the 6 digits the app shows now.');
    setError(undefined);
    const out = await enable.run(code.trim());
    if (out) onOn(out.recovery_codes);
  };

  if (!secret)
    return (
      <PasswordForm
        name="Turn on two-factor sign-in"
        action="Set up two-factor sign-in"
        mutation={setup}
        onDone={(out) => setSecret(out)}
      >
        <p>
          Off. With it on, signing in asks for a 6-digit code from an authenticator app (such as Aegis, Google
          Authenticator or 1Password) after your password.
        </p>
      </PasswordForm>
    );
  return (
    <form className="stack" onSubmit={(e) => void confirm(e)} noValidate aria-label="Confirm two-factor sign-in">
      <section className="secret-box" aria-label="Your two-factor secret">
        <p>
          <strong>Add this secret to your authenticator app now.</strong> It is shown only once: scan the code with the
          app, choose “enter a setup key” in the app and paste it, or open the link on the phone that has the app.
        </p>
        <QrCode text={secret.uri} label="QR code of the two-factor secret, for the authenticator app" />
        <code className="secret" data-testid="totp-secret">
          {secret.secret}
        </code>
        <div className="actions">
          <CopyButton value={secret.secret} label="Copy secret" />
          <a className="button small" href={secret.uri}>
            Open in authenticator app
          </a>
        </div>
        <p className="muted small">Time-based, 6 digits, every 30 s (SHA-1): the settings every app uses.</p>
      </section>
      <div className="narrow-form stack">
        <TextField
          label="Code from the app"
          autoComplete="one-time-code"
          inputMode="numeric"
          hint="Proves the app has the secret; two-factor sign-in is on only after this."
          value={code}
          error={error ?? fieldError(enable.error, 'code')}
          onChange={(e) => setCode(e.target.value)}
        />
        <ErrorNote message={otherError(enable.error, ['code'])} />
        <div>
          <Button type="submit" variant="primary" busy={enable.pending}>
            Turn on
          </Button>
        </div>
      </div>
    </form>
  );
}

function TurnOff({ enabledAt, left, onOff }: { enabledAt: number | null; left: number; onOff: () => void }) {
  return (
    <PasswordForm
      name="Turn off two-factor sign-in"
      action="Turn off two-factor sign-in"
      danger
      mutation={useDisableTwoFactor()}
      onDone={onOff}
    >
      <p>
        <span className="pill pill-ok">On</span> since {dateTime(enabledAt)}. {left} of 10 recovery codes left
        {left <= 3 ? ': turn two-factor off and on again to get 10 new ones.' : '.'}
      </p>
    </PasswordForm>
  );
}

/** One step that takes the current password: set up, or turn off. */
function PasswordForm<O>({
  name,
  action,
  danger,
  mutation,
  onDone,
  children,
}: {
  name: string;
  action: string;
  danger?: boolean;
  mutation: MutationState<string, O>;
  onDone: (out: O) => void;
  children: ReactNode;
}) {
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | undefined>();
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (!password) return setError('Required: your current password.');
    setError(undefined);
    const out = await mutation.run(password);
    if (out !== undefined) {
      setPassword('');
      onDone(out);
    }
  };
  return (
    <form className="stack narrow-form" onSubmit={(e) => void submit(e)} noValidate aria-label={name}>
      {children}
      <PasswordField
        label="Current password"
        purpose="current"
        value={password}
        error={error ?? fieldError(mutation.error, 'password')}
        onChange={(e) => setPassword(e.target.value)}
      />
      <ErrorNote message={otherError(mutation.error, ['password'])} />
      <div>
        <Button type="submit" variant={danger ? 'danger' : 'primary'} busy={mutation.pending}>
          {action}
        </Button>
      </div>
    </form>
  );
}

function RecoveryCodes({ codes, onDone }: { codes: string[]; onDone: () => void }) {
  return (
    <section className="secret-box" aria-label="Recovery codes" tabIndex={-1}>
      <p>
        <strong>Two-factor sign-in is on. Save these 10 recovery codes now.</strong> They are shown only once. Each
        signs you in once in place of a code, if you lose the phone with the app.
      </p>
      <ul className="recovery-codes" data-testid="recovery-codes">
        {codes.map((c) => (
          <li key={c}>
            <code>{c}</code>
          </li>
        ))}
      </ul>
      <div className="actions">
        <CopyButton value={codes.join('\n')} label="Copy all" />
        <Button small onClick={onDone}>
          I have saved them
        </Button>
      </div>
    </section>
  );
}
