import type { Selectable } from 'kysely';
import type { AlertChannelsTable, AlertRulesTable } from '../../db/schema.js';
import { parseJson } from '../../json.js';

// The one reader of the JSON columns of `alert_rules` (docs/architecture.md, "The console").

export type RuleRow = Selectable<AlertRulesTable>;
export type ChannelRow = Selectable<AlertChannelsTable>;

/** A channel that failed this many deliveries in a row is marked failing on the settings page. */
export const FAILING_AFTER = 3;

export function ruleServerIds(row: Pick<RuleRow, 'server_ids'>): number[] | null {
  return parseJson<number[] | null>(row.server_ids, null);
}

export function ruleTags(row: Pick<RuleRow, 'tags'>): string[] | null {
  const tags = parseJson<string[] | null>(row.tags, null);
  return Array.isArray(tags) && tags.length > 0 ? tags : null;
}

/**
 * Whether a rule covers a server (docs/alerts.md, "Scope"): every server of the account when it
 * names neither servers nor tags, else the servers it names and those carrying any of its tags.
 */
export function ruleCovers(
  rule: Pick<RuleRow, 'server_ids' | 'tags'>,
  server: { id: number; tags: readonly string[] },
): boolean {
  const ids = ruleServerIds(rule);
  const tags = ruleTags(rule);
  if (ids === null && tags === null) return true;
  return (ids?.includes(server.id) ?? false) || (tags?.some((t) => server.tags.includes(t)) ?? false);
}

export function ruleChannelIds(row: Pick<RuleRow, 'channel_ids'>): number[] {
  return parseJson<number[]>(row.channel_ids, []);
}

export function ruleView(row: RuleRow) {
  return {
    id: Number(row.id),
    name: row.name,
    kind: row.kind,
    metric: row.metric,
    threshold: row.threshold === null ? null : Number(row.threshold),
    minutes: Number(row.minutes),
    repeat_minutes: Number(row.repeat_minutes),
    server_ids: ruleServerIds(row),
    tags: ruleTags(row),
    channel_ids: ruleChannelIds(row),
    enabled: Number(row.enabled) === 1,
    created_at: Number(row.created_at),
  };
}

/** A channel as the settings page shows it: never the sealed URL (a Slack or Discord URL is a credential). */
export function channelView(row: ChannelRow) {
  const failures = Number(row.failures);
  return {
    id: Number(row.id),
    name: row.name,
    kind: row.kind,
    target: row.target_hint,
    failures,
    failing: failures >= FAILING_AFTER,
    last_success_at: row.last_success_at === null ? null : Number(row.last_success_at),
    last_error: row.last_error,
    created_at: Number(row.created_at),
    confirmed: row.confirmed_at !== null,
    confirmation_sent_at: row.confirm_sent_at === null ? null : Number(row.confirm_sent_at),
  };
}
