import type { ReactNode } from 'react';
import { RoleNote } from '../../../components/role-note';
import { ErrorNote, Loading } from '../../../components/states';
import { useCurrentTeam } from '../../../lib/team';
import { controlProblem } from '../api/get-control';

/** Loading, "not on this agent yet", permission and error states of one control read. */
export function ControlState<T>({
  query,
  what,
  children,
}: {
  query: { data: T | undefined; error: unknown; loading: boolean; refetch: () => Promise<void> };
  what: string;
  children: (data: T) => ReactNode;
}) {
  if (query.error && query.data === undefined) {
    const problem = controlProblem(query.error);
    if (problem.kind === 'missing' || problem.kind === 'forbidden')
      return <p className="note note-muted">{problem.text}</p>;
    return <ErrorNote message={problem.text} onRetry={() => void query.refetch()} />;
  }
  if (query.data === undefined) return <Loading what={what} />;
  return <>{children(query.data)}</>;
}

export const NO_EDIT_ID = 'no-edit-reason';

/** Shown once per page when the account may look but not change. */
export function EditNotice({ canEdit }: { canEdit: boolean }) {
  const team = useCurrentTeam();
  if (canEdit) return null;
  // In a team, by the role held there ("Viewers cannot change protection", components/role-note.tsx).
  if (team) return <RoleNote permission="control.edit" doing="change protection" id={NO_EDIT_ID} />;
  return (
    <p className="note note-muted" id={NO_EDIT_ID}>
      You can view protection but not change it: your account lacks the <code>control.edit</code> permission. Ask a
      console admin to grant it.
    </p>
  );
}

/** Props that disable a control and point at the explanation. */
export const editProps = (canEdit: boolean) =>
  canEdit ? {} : { disabled: true, 'aria-describedby': NO_EDIT_ID, title: 'Needs the control.edit permission' };

/** The result of a write, or the agent's own error for it. */
export function writeError(message: string | null): string | null {
  if (!message) return null;
  if (/no route|not found/i.test(message)) return 'Not available on this agent yet.';
  return message;
}
