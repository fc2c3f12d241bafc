import type { AuditLogTable } from '../../db/schema.js';
import type { AuditService } from '../audit.service.js';

/** Who changed something: the session's account, for the audit log. */
export interface FleetActor {
  accountId: number;
  /** The account's permissions: every fleet change needs `control.edit`, as a control write does. */
  permissions: string;
  kind: AuditLogTable['actor_kind'];
  id: number | null;
  label: string;
  ip: string | null;
}

/** Writes one fleet change to the account's audit log, as its HTTP call would read. */
export type FleetChangeLog = (
  actor: FleetActor,
  action: 'fleet.policy' | 'fleet.entry',
  method: string,
  path: string,
  summary: string,
  status: number,
) => Promise<void>;

export function fleetChangeLog(audit: Pick<AuditService, 'fleet'>): FleetChangeLog {
  return (actor, action, method, path, summary, status) =>
    audit.fleet({
      accountId: actor.accountId,
      action,
      actor: { kind: actor.kind, id: actor.id, label: actor.label },
      ip: actor.ip,
      method,
      path,
      summary,
      status,
      outcome: 'done',
    });
}
