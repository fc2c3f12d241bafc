import { type ButtonHTMLAttributes, useEffect, useRef, useState } from 'react';

type ButtonProps = ButtonHTMLAttributes<HTMLButtonElement> & {
  variant?: 'primary' | 'secondary' | 'danger' | 'link';
  small?: boolean;
  busy?: boolean;
};

/** A real button; while busy it stays focusable and says so. */
export function Button({ variant = 'secondary', small, busy, className, children, disabled, ...rest }: ButtonProps) {
  const classes = ['button', variant, small ? 'small' : '', className ?? ''].filter(Boolean).join(' ');
  return (
    <button type="button" className={classes} disabled={disabled || busy} aria-busy={busy || undefined} {...rest}>
      {children}
    </button>
  );
}

/** Two steps instead of a blocking dialog: the first press asks, the second does it. */
export function ConfirmButton({
  label,
  confirmLabel,
  onConfirm,
  busy,
  disabled,
  small,
  title,
}: {
  label: string;
  confirmLabel: string;
  onConfirm: () => void;
  busy?: boolean;
  disabled?: boolean;
  small?: boolean;
  title?: string;
}) {
  const [asking, setAsking] = useState(false);
  const confirmRef = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (asking) confirmRef.current?.focus();
  }, [asking]);
  if (!asking)
    return (
      <Button
        variant="danger"
        small={small ?? false}
        disabled={disabled ?? false}
        busy={busy ?? false}
        onClick={() => setAsking(true)}
        {...(title ? { title } : {})}
      >
        {label}
      </Button>
    );
  return (
    <span className="confirm">
      <button
        ref={confirmRef}
        type="button"
        className={`button danger${small ? ' small' : ''}`}
        onClick={() => {
          setAsking(false);
          onConfirm();
        }}
      >
        {confirmLabel}
      </button>
      <Button small={small ?? false} onClick={() => setAsking(false)}>
        Cancel
      </Button>
    </span>
  );
}

/** Copies a value; says "Copied" in a live region. The value is never stored anywhere. */
export function CopyButton({ value, label = 'Copy' }: { value: string; label?: string }) {
  const [done, setDone] = useState<'idle' | 'copied' | 'failed'>('idle');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      setDone('copied');
    } catch {
      setDone('failed');
    }
  };
  return (
    <>
      <Button small onClick={() => void copy()}>
        {label}
      </Button>
      <span className="copy-status" role="status" aria-live="polite">
        {done === 'copied' ? 'Copied.' : done === 'failed' ? 'Copy failed: select the text and copy it.' : ''}
      </span>
    </>
  );
}
