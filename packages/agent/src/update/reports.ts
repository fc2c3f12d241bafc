import {
  AGENT_UPDATE_REPORT_STATES,
  type AgentUpdateReportState,
  type UpdateReport,
} from '@palisade/protocol/agent-update';
import { writeFileAtomic } from '../state/state-dir.js';
import { RELEASE_VERSION } from './offer.js';
import { ensureUpdateDir, readJsonObject, type UpdatePaths } from './update-files.js';

/**
 * The agent's last update report, in memory and in report.json: sent with each check-in until one
 * carrying it is answered 200 (`pending`), then kept as delivered, so a restart neither loses a
 * report nor sends one twice (docs/agent.md, "The agent's part").
 */
export interface ReportStore {
  /** The report the next check-in carries; null when the last one was delivered. */
  pending(): UpdateReport | null;
  /** The last report, delivered or not. */
  last(): UpdateReport | null;
  set(report: UpdateReport): void;
  /** A check-in carrying `sent` was answered 200: it is no longer pending. True when it was the pending one. */
  delivered(sent: UpdateReport): boolean;
  /** Forgets the report (its file goes with the update directory). */
  clear(): void;
}

export function createReportStore(paths: UpdatePaths, log: (level: 'warn', message: string) => void): ReportStore {
  let stored: { report: UpdateReport; delivered: boolean } | null = null;
  try {
    const raw = readJsonObject(paths.report);
    if (raw !== null) {
      const report = readReport(raw.report);
      if (report === null || typeof raw.delivered !== 'boolean') log('warn', `${paths.report}: not a report; ignored`);
      else stored = { report, delivered: raw.delivered };
    }
  } catch (err) {
    log('warn', `${(err as Error).message}; the update report in it is ignored`);
  }

  const save = () => {
    try {
      ensureUpdateDir(paths.dir);
      writeFileAtomic(paths.report, `${JSON.stringify(stored)}\n`, 0o600);
    } catch (err) {
      log('warn', `the update report is kept in memory only: ${(err as Error).message}`);
    }
  };

  return {
    pending: () => (stored && !stored.delivered ? stored.report : null),
    last: () => stored?.report ?? null,
    set(report) {
      stored = { report, delivered: false };
      save();
    },
    delivered(sent) {
      if (!stored || stored.delivered || !sameReport(stored.report, sent)) return false;
      stored.delivered = true;
      save();
      return true;
    },
    clear() {
      stored = null;
    },
  };
}

export const sameReport = (a: UpdateReport, b: UpdateReport) =>
  a.rollout_id === b.rollout_id && a.version === b.version && a.state === b.state && a.reason === b.reason;

/** A report as the agent sends it, checked field by field (it is read back from a file); null when it is not one. */
export function readReport(raw: unknown): UpdateReport | null {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return null;
  const r = raw as Record<string, unknown>;
  if (typeof r.rollout_id !== 'number' || !Number.isSafeInteger(r.rollout_id) || r.rollout_id < 1) return null;
  if (typeof r.version !== 'string' || !RELEASE_VERSION.test(r.version)) return null;
  if (!(AGENT_UPDATE_REPORT_STATES as readonly unknown[]).includes(r.state)) return null;
  if (r.reason !== null && (typeof r.reason !== 'string' || r.reason.length > 300)) return null;
  return {
    rollout_id: r.rollout_id,
    version: r.version,
    state: r.state as AgentUpdateReportState,
    reason: r.reason as string | null,
  };
}

/** A reason as a report carries it: one line, at most 300 characters. */
export function oneLine(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 300 ? `${line.slice(0, 299)}…` : line;
}
