import type { Migration, MigrationProvider } from 'kysely';
import { initial } from './0001-initial.js';
import { fleet } from './0002-fleet.js';
import { signingAndTickets } from './0003-signing-and-tickets.js';
import { scaleOut } from './0004-scale-out.js';
import { benchmarkHandoff } from './0005-benchmark-handoff.js';
import { signatureReplay } from './0006-signature-replay.js';
import { enrolmentTokens } from './0007-enrolment-tokens.js';
import { notificationDelivery } from './0008-notification-delivery.js';
import { serverReachability } from './0009-server-reachability.js';
import { alerts } from './0010-alerts.js';
import { accountSecurity } from './0011-account-security.js';
import { alertRuleActivation } from './0012-alert-rule-activation.js';
import { serverTags } from './0013-server-tags.js';
import { plansAndPaging } from './0014-plans-and-paging.js';
import { auditLog } from './0016-audit-log.js';
import { alertRuleTags } from './0017-alert-rule-tags.js';
import { fleetProtection } from './0018-fleet-protection.js';
import { linkRelay } from './0019-link-relay.js';
import { changeCounter } from './0021-change-counter.js';
import { scoreWindowMark } from './0022-score-window-mark.js';
import { fleetBanLimits } from './0023-fleet-ban-limits.js';
import { alertChannelConfirmation } from './0024-alert-channel-confirmation.js';
import { alertHistoryIndexes } from './0025-alert-history-indexes.js';
import { jobRounds } from './0026-job-rounds.js';
import { agentRollouts } from './0027-agent-rollouts.js';
import { teams } from './0028-teams.js';
import { singleSignOn } from './0029-single-sign-on.js';
import { ticketMessageAuthors } from './0030-ticket-message-authors.js';
import { webhookQueueIndex } from './0031-webhook-queue-index.js';
import { serversFillfactor } from './0032-servers-fillfactor.js';
import type { Dialect } from './helpers.js';

export type { Dialect } from './helpers.js';

/** Every migration, in order. Names sort in the order they must run; never edit a landed one, add the next. */
function migrations(dialect: Dialect): Record<string, Migration> {
  return {
    '0001_initial': initial(dialect),
    '0002_fleet': fleet,
    '0003_signing_and_tickets': signingAndTickets(dialect),
    '0004_scale_out': scaleOut,
    '0005_benchmark_handoff': benchmarkHandoff,
    '0006_signature_replay': signatureReplay,
    '0007_enrolment_tokens': enrolmentTokens(dialect),
    '0008_notification_delivery': notificationDelivery,
    '0009_server_reachability': serverReachability,
    '0010_alerts': alerts(dialect),
    '0011_account_security': accountSecurity(dialect),
    '0012_alert_rule_activation': alertRuleActivation,
    '0013_server_tags': serverTags,
    '0014_plans_and_paging': plansAndPaging,
    '0016_audit_log': auditLog(dialect),
    '0017_alert_rule_tags': alertRuleTags,
    '0018_fleet_protection': fleetProtection(dialect),
    '0019_link_relay': linkRelay(dialect),
    '0021_change_counter': changeCounter(dialect),
    '0022_score_window_mark': scoreWindowMark(),
    '0023_fleet_ban_limits': fleetBanLimits(),
    '0024_alert_channel_confirmation': alertChannelConfirmation,
    '0025_alert_history_indexes': alertHistoryIndexes,
    '0026_job_rounds': jobRounds,
    '0027_agent_rollouts': agentRollouts(dialect),
    '0028_teams': teams(dialect),
    '0029_single_sign_on': singleSignOn(dialect),
    '0030_ticket_message_authors': ticketMessageAuthors,
    '0031_webhook_queue_index': webhookQueueIndex,
    '0032_servers_fillfactor': serversFillfactor(dialect),
  };
}

export function migrationProvider(dialect: Dialect): MigrationProvider {
  return {
    async getMigrations() {
      return migrations(dialect);
    },
  };
}

/**
 * Migrations that ran under another name on a released commit, by that name: a database that ran
 * one is renamed to today's name before migrating (same migration, same effect), as Kysely refuses
 * a database that lists a migration it does not know.
 */
export const RENAMED_MIGRATIONS: Readonly<Record<string, string>> = {
  '0025_h_alert_history': '0025_alert_history_indexes',
};
