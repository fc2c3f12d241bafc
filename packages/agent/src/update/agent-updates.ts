import { rmSync } from 'node:fs';
import type { UpdateCheckedInFile, UpdateReport } from '@palisade/protocol/agent-update';
import { PINNED_RELEASE_KEY } from '../release.js';
import { writeFileAtomic } from '../state/state-dir.js';
import { type AgentForm, agentForm, RELEASE_VERSION, readOffer } from './offer.js';
import { createReportStore, oneLine, readReport, sameReport } from './reports.js';
import { takeOffer } from './take-offer.js';
import { present, readJsonObject, updatePaths } from './update-files.js';

export interface AgentUpdatesOptions {
  stateDir: string;
  /** The console the agent checks in with (the offer's files come from it); null when not enrolled. */
  consoleUrl: () => string | null;
  /** The pinned release public key; /etc/palisade/release.pub unless `run --release-key-file` names another. */
  releaseKeyFile?: string;
  /** The version this process runs. */
  version: string;
  clock: () => number;
  log: (level: 'info' | 'warn' | 'error', message: string) => void;
  /** Asks for a check-in soon, to carry a new report. */
  soon: () => void;
  /** How this agent runs; found from the process when not given. */
  form?: () => AgentForm;
}

/** The daemon's half of updates from the console, as the check-in loop sees it (docs/agent.md, "The agent's part"). */
export interface AgentUpdates {
  /** What the next check-in's `update` carries, or null. */
  report(): UpdateReport | null;
  /** A check-in was answered 200; `sent` is the `update` it carried. */
  delivered(sent: UpdateReport | null): void;
  /** The check-in answer's `update`: taken when it is a valid offer not handled yet. Resolves when done with it. */
  offer(raw: unknown): Promise<void>;
  /** Before each check-in: a result.json root wrote, and the update files once nothing waits for them. */
  refresh(): void;
}

const RESULT_STATES = ['updated', 'rolled_back', 'failed'] as const;

export function createAgentUpdates(o: AgentUpdatesOptions): AgentUpdates {
  const paths = updatePaths(o.stateDir);
  const reports = createReportStore(paths, o.log);
  /** Rollouts this process took an offer of (one at a time, each once). */
  const handled = new Set<number>();
  let busy = false;
  /** The report read from result.json: the file goes once a check-in carrying it was answered 200. */
  let fromResult: UpdateReport | null = null;
  /** request.json or checked-in.json is in place for root: the update files stay until its result. */
  let rootPending = present(paths.request);

  // Started by root for the version it was asked to put in place: the first check-in answered 200
  // is what root waits for (checked-in.json), then the update is reported done.
  const request = readRequest();
  let awaitingCheckIn = request !== null && request.version === o.version ? request : null;

  // A download cut short by a restart has no request behind it: say so rather than leave the console waiting.
  const last = reports.last();
  if (last?.state === 'downloading' && request?.rollout_id !== last.rollout_id) {
    reports.set({ ...last, state: 'failed', reason: 'the agent stopped while it downloaded the update' });
  }

  function readRequest(): { rollout_id: number; version: string } | null {
    try {
      const raw = readJsonObject(paths.request);
      if (raw === null) return null;
      const { rollout_id, version } = raw;
      if (typeof rollout_id !== 'number' || !Number.isSafeInteger(rollout_id) || rollout_id < 1) return null;
      if (typeof version !== 'string' || !RELEASE_VERSION.test(version)) return null;
      return { rollout_id, version };
    } catch (err) {
      o.log('warn', `update: ${(err as Error).message}`);
      return null;
    }
  }

  /** result.json as root wrote it, checked field by field; a file that is not one is removed. */
  function readResult(): UpdateReport | null {
    let raw: Record<string, unknown> | null;
    try {
      raw = readJsonObject(paths.result);
    } catch (err) {
      o.log('warn', `update: ${(err as Error).message}; removed`);
      rmSync(paths.result, { force: true });
      return null;
    }
    if (raw === null) return null;
    const reason = typeof raw.reason === 'string' ? oneLine(raw.reason) : null;
    const report = readReport({ ...raw, reason });
    if (report === null || !(RESULT_STATES as readonly string[]).includes(report.state)) {
      o.log('warn', `update: ${paths.result} is not an update result; removed`);
      rmSync(paths.result, { force: true });
      return null;
    }
    return report;
  }

  function setReport(report: UpdateReport) {
    reports.set(report);
    o.soon();
  }

  function checkedIn() {
    if (awaitingCheckIn === null) return;
    const { rollout_id, version } = awaitingCheckIn;
    awaitingCheckIn = null;
    const file: UpdateCheckedInFile = { version, pid: process.pid, at: o.clock() };
    try {
      writeFileAtomic(paths.checkedIn, `${JSON.stringify(file)}\n`, 0o600);
      rootPending = true;
      o.log('info', `update to ${version}: checked in on the new version`);
      setReport({ rollout_id, version, state: 'updated', reason: null });
    } catch (err) {
      o.log('error', `update to ${version}: cannot tell the root updater it checked in: ${(err as Error).message}`);
    }
  }

  /** Once every report is delivered and root has said its last word, the downloads (up to 256 MB) go. */
  function tidy() {
    if (busy || rootPending || awaitingCheckIn || reports.pending() !== null || present(paths.request)) return;
    if (!present(paths.dir) || present(paths.result)) return;
    rmSync(paths.dir, { recursive: true, force: true });
    reports.clear();
  }

  return {
    report: () => reports.pending(),
    delivered(sent) {
      if (sent !== null && reports.delivered(sent) && fromResult !== null && sameReport(fromResult, sent)) {
        rmSync(paths.result, { force: true });
        fromResult = null;
      }
      checkedIn();
    },
    async offer(raw) {
      const read = readOffer(raw);
      if ('error' in read) {
        o.log('warn', `check-in answer: ${read.error}; the update offer is ignored`);
        // An offer naming its rollout and version is answered, once, so the rollout says why.
        const { rollout_id, version } = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>;
        const named =
          typeof rollout_id === 'number' &&
          Number.isSafeInteger(rollout_id) &&
          rollout_id > 0 &&
          typeof version === 'string' &&
          RELEASE_VERSION.test(version);
        if (named && !handled.has(rollout_id)) {
          handled.add(rollout_id);
          setReport({ rollout_id, version, state: 'failed', reason: oneLine(`the offer was refused: ${read.error}`) });
        }
        return;
      }
      const { offer } = read;
      if (busy || handled.has(offer.rollout_id)) return;
      const last = reports.last();
      if (last?.rollout_id === offer.rollout_id && last.state !== 'downloading') return;
      if (readRequest()?.rollout_id === offer.rollout_id || fromResult?.rollout_id === offer.rollout_id) return;
      handled.add(offer.rollout_id);
      if (offer.version === o.version) {
        setReport({ rollout_id: offer.rollout_id, version: offer.version, state: 'updated', reason: null });
        return;
      }
      const consoleUrl = o.consoleUrl();
      if (consoleUrl === null) return;
      busy = true;
      try {
        const report = await takeOffer(offer, {
          paths,
          consoleUrl,
          releaseKeyFile: o.releaseKeyFile ?? PINNED_RELEASE_KEY,
          form: (o.form ?? (() => agentForm()))(),
          clock: o.clock,
          log: o.log,
          started: () =>
            setReport({ rollout_id: offer.rollout_id, version: offer.version, state: 'downloading', reason: null }),
        });
        if (report.state === 'applying') rootPending = true;
        setReport(report);
      } finally {
        busy = false;
      }
    },
    refresh() {
      if (busy) return;
      const result = readResult();
      if (result !== null) {
        rootPending = false;
        const lastReport = reports.last();
        if (fromResult !== null && sameReport(fromResult, result)) {
          // Already pending: its file goes once it is delivered.
        } else if (lastReport !== null && reports.pending() === null && sameReport(lastReport, result)) {
          rmSync(paths.result, { force: true }); // what this agent reported itself (updated): nothing new
        } else {
          fromResult = result;
          o.log(
            'info',
            `update to ${result.version}: the root updater says ${result.state}${result.reason ? `: ${result.reason}` : ''}`,
          );
          setReport(result);
        }
      }
      tidy();
    },
  };
}
