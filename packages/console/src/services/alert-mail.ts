import type { AlertNotification } from './notifications.service.js';

/** What an alert's state reads as in an e-mail. */
const STATES: Record<AlertNotification['kind'], string> = {
  'alert.fired': 'firing',
  'alert.repeat': 'still firing',
  'alert.resolved': 'resolved',
  'alert.test': 'a test',
  'agent_update.failed': 'an agent update failed',
};

/** The rule a value belongs to, for its unit; null when the rule is gone. */
export interface RuleOfValue {
  kind: string;
  metric: string | null;
}

/** A rule's value in words, with its unit (docs/alerts.md, "E-mail"). */
export function valueWords(value: number, rule: RuleOfValue | null): string {
  switch (rule?.kind) {
    case 'offline':
      return `${value} s since the last check-in`;
    case 'unreachable':
      return `${value} min unreachable`;
    case 'metric':
      return rule.metric === 'load' ? `load ${value}` : `${rule.metric ?? 'usage'} ${value} %`;
    case 'score':
      return `score ${value} of 1000`;
    case 'attack':
      return `${value} ${value === 1 ? 'attack' : 'attacks'} in progress`;
    case 'benchmark_unverified':
      return `benchmark run ${value}`;
    default:
      return String(value);
  }
}

/** When, in words and in UTC (the console does not know the reader's zone): "Friday 27 November 2026 at 18:25:02 UTC". */
export function timeWords(at: number): string {
  return new Intl.DateTimeFormat('en-GB', { timeZone: 'UTC', dateStyle: 'full', timeStyle: 'long' }).format(at);
}

/** The dashboard page of a server, or null without `PALISADE_PUBLIC_URL`. */
export function serverLink(publicUrl: string | null, serverId: number | null): string | null {
  return publicUrl === null || serverId === null ? null : `${publicUrl}/dashboard/servers/${serverId}`;
}

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/**
 * An alert's e-mail (docs/alerts.md, "E-mail"): the title as subject; a text part with what
 * happened, then rule, server, state, value and time, and a link to the server's page (or a line
 * saying why there is none); an HTML part with the same, after it.
 */
export function alertMail(
  n: AlertNotification,
  rule: RuleOfValue | null,
  publicUrl: string | null,
): { subject: string; text: string; html: string } {
  const fields: Array<[string, string]> = [];
  if (n.rule !== null) fields.push(['Rule', n.rule]);
  if (n.server !== null) fields.push(['Server', n.server]);
  fields.push(['State', STATES[n.kind] ?? n.kind]);
  if (n.value !== null) fields.push(['Value', valueWords(n.value, rule)]);
  fields.push(['Time', timeWords(n.at)]);
  const link = serverLink(publicUrl, n.server_id);
  const linkLine =
    link !== null
      ? `Open the server: ${link}`
      : n.server_id === null
        ? null
        : "No link: this console's public address (PALISADE_PUBLIC_URL) is not set.";
  const text = [
    n.title,
    ...(n.body ? ['', n.body] : []),
    '',
    ...fields.map(([k, v]) => `${k}: ${v}`),
    ...(linkLine === null ? [] : ['', linkLine]),
    '',
    '-- ',
    'Sent by Palisade. Change what you receive under Alerts in the dashboard.',
  ].join('\n');
  const html = [
    '<!doctype html><html><body>',
    `<h2>${escapeHtml(n.title)}</h2>`,
    ...(n.body ? [`<p>${escapeHtml(n.body)}</p>`] : []),
    '<table>',
    ...fields.map(([k, v]) => `<tr><th align="left">${escapeHtml(k)}</th><td>${escapeHtml(v)}</td></tr>`),
    '</table>',
    link !== null
      ? `<p><a href="${escapeHtml(link)}">Open the server</a></p>`
      : linkLine === null
        ? ''
        : `<p>${escapeHtml(linkLine)}</p>`,
    '<p>Sent by Palisade. Change what you receive under Alerts in the dashboard.</p>',
    '</body></html>',
  ].join('\n');
  return { subject: n.title, text, html };
}
