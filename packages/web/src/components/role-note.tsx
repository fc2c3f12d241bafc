import { ROLE_PERMISSIONS, type TeamPermission } from '@palisade/protocol';
import type { ReactNode } from 'react';
import { useCan, useCurrentTeam } from '../lib/team';

const capital = (word: string) => `${word.charAt(0).toUpperCase()}${word.slice(1)}`;

/**
 * Why an action is off, when the role held in the team lacks its permission (packages/protocol/src/roles.ts):
 * "Viewers cannot change servers." The console refuses anyway; this is so the page does not pretend.
 */
export function RoleNote({ permission, doing, id }: { permission: TeamPermission; doing: string; id?: string }) {
  const team = useCurrentTeam();
  if (useCan(permission) || !team) return null;
  // A role that grants it but a member whose grant was taken away (the admin CLI's revoke): say that instead.
  const byRole = ROLE_PERMISSIONS[team.role].includes(permission);
  return (
    <p className="note note-muted" id={id}>
      {byRole ? `You cannot ${doing} in ${team.name}` : `${capital(team.role)}s cannot ${doing}`}: it needs the{' '}
      <code>{permission}</code> permission. Ask{' '}
      {ROLE_PERMISSIONS.admin.includes(permission) ? 'an owner or admin' : 'an owner'} of the team.
    </p>
  );
}

/** The note above, and every control inside off (a disabled fieldset) when the role lacks `permission`. */
export function RoleGate({
  permission,
  doing,
  children,
}: {
  permission: TeamPermission;
  doing: string;
  children: ReactNode;
}) {
  const can = useCan(permission);
  return (
    <>
      <RoleNote permission={permission} doing={doing} />
      <fieldset className="role-gate stack" disabled={!can}>
        {children}
      </fieldset>
    </>
  );
}
