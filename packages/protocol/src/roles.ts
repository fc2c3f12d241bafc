import { z } from 'zod';

/** What a member may be granted or refused beside their role (docs/fleet.md, "Proxies"; the admin CLI). */
export const PERMISSIONS = ['control.read', 'control.edit'] as const;
export const permissionSchema = z.enum(PERMISSIONS);
export type Permission = z.infer<typeof permissionSchema>;

/**
 * Teams (docs/teams.md): the roles a member holds in a team and what each grants. One set, read by
 * the console's enforcement and by the dashboard.
 */
export const TEAM_ROLES = ['owner', 'admin', 'operator', 'viewer', 'billing'] as const;
export const teamRoleSchema = z.enum(TEAM_ROLES);
export type TeamRole = z.infer<typeof teamRoleSchema>;

/**
 * Everything a team route can need. `control.read`/`control.edit` are the seed's (docs/fleet.md,
 * "Proxies"), and the ones the admin CLI grants and revokes per member.
 */
export const TEAM_PERMISSIONS = [
  'fleet.read',
  'billing.read',
  ...PERMISSIONS,
  'servers.write',
  'alerts.write',
  'tickets.write',
  'billing.write',
  'members.manage',
  'settings.write',
  'security.write',
  'team.delete',
] as const;
export type TeamPermission = (typeof TEAM_PERMISSIONS)[number];

const OPERATOR: readonly TeamPermission[] = [
  'fleet.read',
  'billing.read',
  'control.read',
  'control.edit',
  'servers.write',
  'alerts.write',
  'tickets.write',
];

export const ROLE_PERMISSIONS: Readonly<Record<TeamRole, readonly TeamPermission[]>> = {
  owner: TEAM_PERMISSIONS,
  admin: TEAM_PERMISSIONS.filter((p) => p !== 'team.delete' && p !== 'security.write'),
  operator: OPERATOR,
  viewer: ['fleet.read', 'billing.read', 'control.read'],
  billing: ['billing.read', 'billing.write'],
};

/** How high a role stands: nobody gives a role above their own (viewer and billing stand level). */
export const ROLE_RANK: Readonly<Record<TeamRole, number>> = { owner: 4, admin: 3, operator: 2, viewer: 1, billing: 1 };

/** The role's permissions, with the member's overrides (only `control.*`, from the admin CLI) applied. */
export function effectivePermissions(
  role: TeamRole,
  granted: readonly Permission[] = [],
  revoked: readonly Permission[] = [],
): TeamPermission[] {
  const set = new Set<TeamPermission>(ROLE_PERMISSIONS[role]);
  for (const p of granted) set.add(p);
  for (const p of revoked) set.delete(p);
  return TEAM_PERMISSIONS.filter((p) => set.has(p));
}

export const isTeamRole = (value: unknown): value is TeamRole =>
  typeof value === 'string' && (TEAM_ROLES as readonly string[]).includes(value);

const teamId = z.number().int().positive();

/** A team the signed-in person belongs to, with their role there (`GET /api/teams`). */
export const teamSchema = z.object({
  id: teamId,
  name: z.string(),
  role: teamRoleSchema,
  /** Every member must have two-factor sign-in on to act in the team. */
  require_two_factor: z.boolean(),
});
export type Team = z.infer<typeof teamSchema>;

/** A member as the members page shows them (`GET /api/team/members`). */
export const teamMemberSchema = z.object({
  person_id: teamId,
  name: z.string(),
  email: z.string(),
  role: teamRoleSchema,
  two_factor: z.boolean(),
  /** The last time they used the team (a session acting in it, or one of their tokens there); null: never. */
  last_active_at: z.number().int().nullable(),
  joined_at: z.number().int(),
});
export type TeamMember = z.infer<typeof teamMemberSchema>;

/** An invitation as the team's members page lists it (never its link after it was created). */
export const invitationSchema = z.object({
  id: teamId,
  email: z.string().nullable(),
  role: teamRoleSchema,
  invited_by: z.string().nullable(),
  created_at: z.number().int(),
  expires_at: z.number().int(),
});
export type Invitation = z.infer<typeof invitationSchema>;

/** `POST /api/team/invitations`: the invitation and its link, shown this once; whether it was mailed. */
export const createdInvitationSchema = z.object({
  invitation: invitationSchema,
  link: z.string(),
  mailed: z.boolean(),
});

/** `GET /api/invitations/{token}`: what the accept page shows. */
export const invitationPreviewSchema = z.object({
  team: z.string(),
  role: teamRoleSchema,
  invited_by: z.string().nullable(),
  email: z.string().nullable(),
  expires_at: z.number().int(),
});
