import { z } from 'zod';

/**
 * The audit log's entries (docs/protection.md, "Audit log"): who changed what on which server, from
 * where, and what the agent answered. Entries are never edited; they are removed only by age.
 */
export const AUDIT_ACTIONS = [
  'control.write',
  'fleet.policy',
  'fleet.entry',
  'fleet.apply',
  'server.connection',
  'agent_update.start',
  'agent_update.cancel',
  'agent_update.wave',
  'agent_update.failed',
  'agent_update.completed',
  'team.created',
  'team.renamed',
  'team.two_factor',
  'member.role',
  'member.removed',
  'member.left',
  'invitation.created',
  'invitation.revoked',
  'invitation.accepted',
  'sso.sign_in',
  'sso.person_created',
  'sso.member',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];
export const AUDIT_ACTION_LABELS: Record<AuditAction, string> = {
  'control.write': 'Protection changed through the console',
  'fleet.policy': 'Fleet policy changed',
  'fleet.entry': 'Fleet list entry added or lifted',
  'fleet.apply': 'Fleet entry applied to a server or removed from it',
  'server.connection': 'How the console reaches a server switched (direct or outbound link)',
  'agent_update.start': 'Agent update started',
  'agent_update.cancel': 'Agent update cancelled',
  'agent_update.wave': 'Agent update: next wave started',
  'agent_update.failed': 'Agent update failed',
  'agent_update.completed': 'Agent update completed',
  'team.created': 'Team created',
  'team.renamed': 'Team renamed',
  'team.two_factor': 'Two-factor sign-in required of every member, or no longer',
  'member.role': "A member's role changed",
  'member.removed': 'A member removed from the team',
  'member.left': 'A member left the team',
  'invitation.created': 'Invitation created',
  'invitation.revoked': 'Invitation revoked',
  'invitation.accepted': 'Invitation accepted',
  'sso.sign_in': 'Signed in with single sign-on',
  'sso.person_created': 'Person created by single sign-on',
  'sso.member': "A membership given or changed by the provider's groups (single sign-on)",
};
/** At most this many characters of what changed (secrets are removed before). */
export const AUDIT_SUMMARY_MAX = 500;

export const auditEntrySchema = z.object({
  id: z.number().int().positive(),
  at: z.number().int(),
  action: z.enum(AUDIT_ACTIONS),
  actor_kind: z.enum(['session', 'token', 'signing_key', 'console']),
  /** Who, in words: the account's e-mail, a token's or signing key's name, or "the console". */
  actor: z.string(),
  ip: z.string().nullable(),
  server_id: z.number().int().nullable(),
  server_name: z.string().nullable(),
  method: z.string().nullable(),
  path: z.string().nullable(),
  summary: z.string().max(AUDIT_SUMMARY_MAX),
  /** The agent's answer, or the console's refusal (502 when the agent did not answer). */
  status: z.number().int(),
  outcome: z.string(),
});
export type AuditEntry = z.infer<typeof auditEntrySchema>;

export const auditPageSchema = z.object({
  entries: z.array(auditEntrySchema),
  /** Pass as `cursor` for the next (older) page; null when this is the last. */
  next_cursor: z.string().nullable(),
  total: z.number().int().nonnegative(),
});
export type AuditPage = z.infer<typeof auditPageSchema>;
