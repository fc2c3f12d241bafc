import type { Database, SecurityEventsTable } from '../db/schema.js';
import {
  deleteSecurityEventsBefore,
  insertSecurityEvent,
  listSecurityEvents,
} from '../repositories/security-events.repository.js';
import type { PageRequest } from '../validation.js';

/** Events are kept this long, then deleted by housekeeping. */
export const SECURITY_EVENT_RETENTION_MS = 30 * 86_400_000;

export interface SecurityEvent {
  /** The team (a signing key's failures). */
  account_id: number | null;
  /** The person (sign-ins, two-factor, password). */
  person_id?: number | null;
  kind: SecurityEventsTable['kind'];
  reason: string;
  key_last4?: string | null;
  method: string;
  path: string;
  ip: string;
}

export function createSecurityEventsService({ db, clock }: { db: Database; clock: () => number }) {
  return {
    async record(event: SecurityEvent) {
      await insertSecurityEvent(db, {
        ...event,
        person_id: event.person_id ?? null,
        key_last4: event.key_last4 ?? null,
        path: event.path.slice(0, 500),
        created_at: clock(),
      });
    },
    list: (accountId: number, personId: number, page: PageRequest) => listSecurityEvents(db, accountId, personId, page),
    expire: () => deleteSecurityEventsBefore(db, clock() - SECURITY_EVENT_RETENTION_MS),
  };
}

export type SecurityEventsService = ReturnType<typeof createSecurityEventsService>;
