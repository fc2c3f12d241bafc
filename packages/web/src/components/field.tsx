import { type InputHTMLAttributes, type ReactNode, type SelectHTMLAttributes, useId } from 'react';

interface FieldProps {
  label: string;
  error?: string | undefined;
  hint?: ReactNode;
}

/** A labelled input with its hint and error tied to it for screen readers. */
export function TextField({ label, error, hint, id, ...input }: FieldProps & InputHTMLAttributes<HTMLInputElement>) {
  const auto = useId();
  const inputId = id ?? auto;
  const hintId = hint ? `${inputId}-hint` : undefined;
  const errorId = error ? `${inputId}-error` : undefined;
  return (
    <div className="field">
      <label htmlFor={inputId}>{label}</label>
      <input
        id={inputId}
        aria-invalid={error ? true : undefined}
        aria-describedby={[hintId, errorId].filter(Boolean).join(' ') || undefined}
        {...input}
      />
      {hint ? (
        <p className="hint" id={hintId}>
          {hint}
        </p>
      ) : null}
      {error ? (
        <p className="field-error" id={errorId}>
          {error}
        </p>
      ) : null}
    </div>
  );
}

/** The hint every new password carries: the console's own limits (packages/protocol/src/requests/account.ts). */
const NEW_PASSWORD_HINT = '8 to 256 characters.';

/**
 * A password input: `current` asks for the one the account has, `new` for one being chosen (the
 * browser offers to generate and save it; the hint says the limits, then `hint` if given), `repeat`
 * for the new one typed again.
 */
export function PasswordField({
  purpose,
  hint,
  ...field
}: FieldProps & { purpose: 'current' | 'new' | 'repeat' } & Omit<
    InputHTMLAttributes<HTMLInputElement>,
    'type' | 'autoComplete'
  >) {
  return (
    <TextField
      {...field}
      type="password"
      autoComplete={purpose === 'current' ? 'current-password' : 'new-password'}
      hint={purpose === 'new' ? (hint ? `${NEW_PASSWORD_HINT} ${hint}` : NEW_PASSWORD_HINT) : hint}
    />
  );
}

export function TextArea({
  label,
  error,
  hint,
  id,
  ...input
}: FieldProps & InputHTMLAttributes<HTMLTextAreaElement> & { rows?: number }) {
  const auto = useId();
  const inputId = id ?? auto;
  const errorId = error ? `${inputId}-error` : undefined;
  const hintId = hint ? `${inputId}-hint` : undefined;
  return (
    <div className="field">
      <label htmlFor={inputId}>{label}</label>
      <textarea
        id={inputId}
        aria-invalid={error ? true : undefined}
        aria-describedby={[hintId, errorId].filter(Boolean).join(' ') || undefined}
        {...input}
      />
      {hint ? (
        <p className="hint" id={hintId}>
          {hint}
        </p>
      ) : null}
      {error ? (
        <p className="field-error" id={errorId}>
          {error}
        </p>
      ) : null}
    </div>
  );
}

export function SelectField({
  label,
  error,
  hint,
  id,
  children,
  ...select
}: FieldProps & SelectHTMLAttributes<HTMLSelectElement>) {
  const auto = useId();
  const inputId = id ?? auto;
  const errorId = error ? `${inputId}-error` : undefined;
  const hintId = hint ? `${inputId}-hint` : undefined;
  return (
    <div className="field">
      <label htmlFor={inputId}>{label}</label>
      <select
        id={inputId}
        aria-invalid={error ? true : undefined}
        aria-describedby={[hintId, errorId].filter(Boolean).join(' ') || undefined}
        {...select}
      >
        {children}
      </select>
      {hint ? (
        <p className="hint" id={hintId}>
          {hint}
        </p>
      ) : null}
      {error ? (
        <p className="field-error" id={errorId}>
          {error}
        </p>
      ) : null}
    </div>
  );
}
