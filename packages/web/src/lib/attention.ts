import type { AlertRule, DashboardServerSummary } from '@palisade/protocol';

/**
 * Which servers need attention, and which figures are past their limits (docs/dashboard.md,
 * "Fleet"): the fleet's default order and the colours of its figures.
 */

export type Figure = 'cpu' | 'memory' | 'disk';
export type Limits = Record<Figure, number>;
/** Without an alert rule, a figure is hot from 90 %: where the shipped rule templates fire. */
export const DEFAULT_LIMITS: Limits = { cpu: 90, memory: 90, disk: 90 };
/** A figure within this many points below its limit is warm: on its way. */
export const WARM_MARGIN = 10;

const METRIC_OF: Record<string, Figure | undefined> = { cpu: 'cpu', memory: 'memory', disk: 'disk' };

/** Whether an alert rule covers a server: every server, a listed one, or one carrying a listed tag. */
function covers(rule: AlertRule, server: Pick<DashboardServerSummary, 'id' | 'tags'>): boolean {
  if (rule.server_ids === null && rule.tags === null) return true;
  return (rule.server_ids?.includes(server.id) ?? false) || (rule.tags?.some((t) => server.tags.includes(t)) ?? false);
}

/**
 * A server's limits: the lowest threshold of the enabled metric rules covering it, per figure; the
 * default where no rule covers it.
 */
export function limitsFor(server: Pick<DashboardServerSummary, 'id' | 'tags'>, rules: readonly AlertRule[]): Limits {
  const limits = { ...DEFAULT_LIMITS };
  const ruled = new Set<Figure>();
  for (const rule of rules) {
    const figure = rule.metric === null ? undefined : METRIC_OF[rule.metric];
    if (rule.kind !== 'metric' || !rule.enabled || figure === undefined || rule.threshold === null) continue;
    if (!covers(rule, server)) continue;
    limits[figure] = ruled.has(figure) ? Math.min(limits[figure], rule.threshold) : rule.threshold;
    ruled.add(figure);
  }
  return limits;
}

export type Heat = 'hot' | 'warm' | null;

/** `hot` at or past the limit, `warm` within WARM_MARGIN points below it, else null. */
export function heat(value: number | null | undefined, limit: number): Heat {
  if (value === null || value === undefined || !Number.isFinite(value)) return null;
  if (value >= limit) return 'hot';
  if (value >= limit - WARM_MARGIN) return 'warm';
  return null;
}

/** Attention ranks, most urgent first: the fleet's default order (docs/dashboard.md, "Fleet"). */
export const ATTENTION = ['under attack', 'unreachable', 'offline', 'hot', 'late', 'fine'] as const;
export type Attention = (typeof ATTENTION)[number];

/** Why a server needs attention first: under attack, unreachable, offline, a hot figure, late, or fine. */
export function attentionOf(
  server: Pick<DashboardServerSummary, 'state' | 'attacks_active'>,
  figures: Partial<Record<Figure, number | null>>,
  limits: Limits,
): Attention {
  if ((server.attacks_active ?? 0) > 0) return 'under attack';
  if (server.state === 'unreachable') return 'unreachable';
  if (server.state === 'offline') return 'offline';
  if ((['cpu', 'memory', 'disk'] as const).some((f) => heat(figures[f], limits[f]) === 'hot')) return 'hot';
  if (server.state === 'late') return 'late';
  return 'fine';
}
