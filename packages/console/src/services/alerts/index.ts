import { lateAfterMs } from '@palisade/protocol';
import type { Database } from '../../db/schema.js';
import type { GuardedClient } from '../../outbound/guarded-client.js';
import type { SecretBox } from '../../secrets.js';
import type { NotificationsService } from '../notifications.service.js';
import { createAlertChannels } from './channels.js';
import { createEvaluation } from './evaluate.js';
import { createAlertHistory } from './history.js';
import { createAlertRules } from './rules.js';

export { type ChannelInput, CONFIRMATION_TTL_MS, confirmationLink } from './channels.js';
export type { EvaluationRound } from './evaluate.js';
export type { RuleInput } from './rules.js';

/**
 * Alerts (docs/alerts.md): rules (rules.ts), channels (channels.ts), history and mutes
 * (history.ts), and the evaluation round (evaluate.ts) that turns conditions (conditions.ts) into
 * notifications queued with the notifications service.
 */
export function createAlertsService(deps: {
  db: Database;
  clock: () => number;
  outbound: GuardedClient;
  secrets: SecretBox;
  notifications: NotificationsService;
  /** The check-in interval told to agents: `late` rules judge by it (lateAfterMs()). */
  checkinIntervalS: number;
}) {
  const { db, clock, notifications } = deps;
  return {
    ...createAlertRules({ db, clock }),
    ...createAlertChannels(deps),
    ...createAlertHistory({ db, clock }),
    evaluate: createEvaluation({ db, clock, notifications, lateAfter: lateAfterMs(deps.checkinIntervalS) }),
  };
}

export type AlertsService = ReturnType<typeof createAlertsService>;
