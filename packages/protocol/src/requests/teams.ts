import { z } from 'zod';
import { teamRoleSchema } from '../roles.js';
import { registerRequest } from './account.js';
import { nameField } from './fields.js';

/** `POST /api/teams` and `PATCH /api/teams/{id}`: the team's name. */
export const teamNameRequest = z.object({ name: nameField }).strict();
export type TeamNameRequest = z.input<typeof teamNameRequest>;

/** `PATCH /api/teams/{id}`: the team's name, and whether it requires two-factor sign-in (owners). */
export const teamSettingsRequest = z
  .object({ name: nameField.optional(), require_two_factor: z.boolean('expected true or false').optional() })
  .strict()
  .refine(
    (v) => v.name !== undefined || v.require_two_factor !== undefined,
    'name: expected a name or require_two_factor',
  );
export type TeamSettingsRequest = z.input<typeof teamSettingsRequest>;

/** `PATCH /api/team/members/{personId}`: the member's new role. */
export const memberRoleRequest = z
  .object({ role: z.enum(teamRoleSchema.options, 'expected one of owner, admin, operator, viewer, billing') })
  .strict();
export type MemberRoleRequest = z.input<typeof memberRoleRequest>;

/** `POST /api/team/invitations`: the role it gives, and an address to send the link to (optional). */
export const invitationRequest = z
  .object({
    email: z.email('expected an email address').max(254, 'at most 254 characters').optional(),
    role: z.enum(teamRoleSchema.options, 'expected one of owner, admin, operator, viewer, billing'),
  })
  .strict();
export type InvitationRequest = z.input<typeof invitationRequest>;

/**
 * `POST /api/invitations/{token}/accept`: nothing when signed in; otherwise the new person's
 * e-mail, name and password (registerRequest's fields).
 */
export const acceptInvitationRequest = registerRequest.strict().optional();
export type AcceptInvitationRequest = z.input<typeof acceptInvitationRequest>;
