import type { ReactNode } from 'react';

/** Loading, empty and error states, the same everywhere. */
export function Loading({ what = 'Loading' }: { what?: string }) {
  return (
    <p className="state state-loading" role="status" aria-live="polite">
      <span className="spinner" aria-hidden="true" /> {what}…
    </p>
  );
}

export function Empty({ children }: { children: ReactNode }) {
  return <div className="state state-empty">{children}</div>;
}

export function ErrorNote({ message, onRetry }: { message: string | null | undefined; onRetry?: () => void }) {
  if (!message) return null;
  return (
    <div className="state state-error" role="alert">
      <span>{message}</span>
      {onRetry ? (
        <button type="button" className="button small" onClick={onRetry}>
          Try again
        </button>
      ) : null}
    </div>
  );
}

/** A polite live region for the outcome of an action ("Saved.", "Token revoked."). */
export function StatusLine({ children }: { children: ReactNode }) {
  return (
    <p className="status-line" role="status" aria-live="polite">
      {children}
    </p>
  );
}

/** Renders loading, then error, then the content once there is data. */
export function QueryView<T>({
  query,
  what,
  children,
}: {
  query: { data: T | undefined; loading: boolean; errorMessage: string | null; refetch: () => Promise<void> };
  what?: string;
  children: (data: T) => ReactNode;
}) {
  if (query.data !== undefined)
    return (
      <>
        {query.errorMessage ? <ErrorNote message={query.errorMessage} onRetry={() => void query.refetch()} /> : null}
        {children(query.data)}
      </>
    );
  if (query.errorMessage) return <ErrorNote message={query.errorMessage} onRetry={() => void query.refetch()} />;
  return <Loading {...(what ? { what } : {})} />;
}
