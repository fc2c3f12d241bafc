import type { JobRunner } from '../jobs/job-runner.js';
import { OutboundError, type PostJson } from '../lib/outbound.js';
import type { Enrolment } from '../state/enrolment.js';

export interface CheckinSettings {
  intervalS: number;
  timeoutMs: number;
}

/** The `checkin` part of /metrics and `info`. */
export interface CheckinStatus {
  enrolled: boolean;
  console_url: string | null;
  state: 'not_enrolled' | 'ok' | 'backing_off' | 'revoked' | 'starting';
  interval_s: number;
  last_attempt_at: number | null;
  last_success_at: number | null;
  last_error: string | null;
  consecutive_failures: number;
  backoff_s: number | null;
  next_attempt_at: number | null;
  /** Samples taken while check-ins failed, waiting to be sent. */
  buffered_samples: number;
}

/**
 * Seconds until the next try after `failures` failures in a row: 5 s, doubling, never longer than
 * the interval, so an agent is back at most one interval after the console (docs/agent.md).
 */
export const FIRST_RETRY_S = 5;
export function nextDelayS(intervalS: number, failures: number): number {
  if (failures <= 0) return intervalS;
  return Math.min(intervalS, FIRST_RETRY_S * 2 ** (failures - 1));
}

/** A back-off wait is drawn between half and all of the delay, so a fleet does not come back in one instant. */
export function jittered(delayMs: number, random: () => number = Math.random): number {
  return Math.round(delayMs * (0.5 + random() * 0.5));
}

/**
 * Samples kept while the console is unreachable: 720 (6 hours at the 30 s interval), oldest
 * dropped; sent 120 per check-in (MAX_PAST_SAMPLES in packages/protocol/src/checkin.ts).
 */
export const BUFFER_MAX = 720;
export const PAST_PER_CHECKIN = 120;
/** After a check-in that left samples in the buffer, the next one follows after this many ms. */
const DRAIN_MS = 1000;

type BufferedSample = { ts: number } & Record<string, unknown>;

export interface Checkin {
  start(enrolment: Enrolment): void;
  stop(): void;
  configure(settings: CheckinSettings): void;
  status(): CheckinStatus;
  /** One check-in now (the timer calls this too). */
  attempt(): Promise<void>;
  /** A check-in within SOON_MS, ahead of the timer (a ban to report); one in flight is followed by another. */
  soon(): void;
}

/** How soon a check-in follows `soon()`: a burst of bans goes in one check-in. */
export const SOON_MS = 200;

/**
 * Checks in with the console on a timer that never blocks the API. While the console is down or
 * answers 5xx, waits grow from 5 s up to the interval, with jitter, and each unsent sample is kept
 * to be sent with the next check-ins; a 401 means the enrolment was revoked, and check-ins stop
 * until the agent is enrolled again.
 */
export function createCheckin(opts: {
  clock: () => number;
  settings: CheckinSettings;
  post: PostJson;
  body: () => { sample?: BufferedSample } & Record<string, unknown>;
  /** Told of each body the console answered 2xx. */
  delivered?: (body: Record<string, unknown>) => void;
  /** Awaited before each body is made (the update files root may have written); never throws. */
  prepare?: () => Promise<void>;
  /** The answer's `update` (an offer, unchecked), when it carries one. */
  offered?: (update: unknown) => void;
  version: string;
  jobs: JobRunner;
  log: (level: 'info' | 'warn' | 'error', message: string) => void;
  /** Timer seam for tests; returns a cancel function. */
  schedule?: (fn: () => void, ms: number) => () => void;
}): Checkin {
  const { clock, post, log } = opts;
  const schedule =
    opts.schedule ??
    ((fn: () => void, ms: number) => {
      const t = setTimeout(fn, ms);
      return () => clearTimeout(t);
    });
  let settings = opts.settings;
  let enrolment: Enrolment | null = null;
  let consoleIntervalS: number | null = null;
  let cancel: (() => void) | null = null;
  let inFlight = false;
  let again = false;
  let generation = 0;
  const buffer: BufferedSample[] = [];
  const status: CheckinStatus = {
    enrolled: false,
    console_url: null,
    state: 'not_enrolled',
    interval_s: settings.intervalS,
    last_attempt_at: null,
    last_success_at: null,
    last_error: null,
    consecutive_failures: 0,
    backoff_s: null,
    next_attempt_at: null,
    buffered_samples: 0,
  };

  const interval = () => consoleIntervalS ?? settings.intervalS;

  function plan(delayS: number) {
    planMs(status.consecutive_failures > 0 ? jittered(delayS * 1000) : delayS * 1000);
  }

  function planMs(ms: number) {
    cancel?.();
    status.next_attempt_at = clock() + ms;
    cancel = schedule(() => {
      cancel = null;
      void attempt();
    }, ms);
  }

  /** Keeps the sample of a check-in that did not arrive, once per sample time, the newest BUFFER_MAX. */
  function keep(sample: BufferedSample | undefined) {
    if (!sample || typeof sample.ts !== 'number') return;
    const last = buffer.at(-1);
    if (last && sample.ts <= last.ts) return;
    buffer.push(sample);
    if (buffer.length > BUFFER_MAX) buffer.splice(0, buffer.length - BUFFER_MAX);
    status.buffered_samples = buffer.length;
  }

  function failed(message: string) {
    status.consecutive_failures++;
    status.last_error = message;
    status.state = 'backing_off';
    const delay = nextDelayS(interval(), status.consecutive_failures);
    status.backoff_s = delay;
    if (status.consecutive_failures === 1 || status.consecutive_failures % 10 === 0) {
      log('warn', `check-in failed (${status.consecutive_failures} in a row): ${message}; next try in ${delay} s`);
    }
    plan(delay);
  }

  async function attempt(): Promise<void> {
    if (!enrolment || inFlight || status.state === 'revoked') return;
    inFlight = true;
    const mine = generation;
    const target = enrolment;
    status.last_attempt_at = clock();
    try {
      await opts.prepare?.();
      if (mine !== generation) return;
      const body = opts.body();
      const past = buffer.slice(0, PAST_PER_CHECKIN);
      let answer: { status: number; body: string };
      try {
        answer = await post(
          `${target.console_url}/api/agent/checkin`,
          JSON.stringify(past.length > 0 ? { ...body, past_samples: past } : body),
          { authorization: `Bearer ${target.token}` },
          settings.timeoutMs,
        );
      } catch (err) {
        if (mine !== generation) return;
        const why =
          err instanceof OutboundError && err.kind === 'timeout'
            ? 'the console did not answer'
            : 'could not reach the console';
        keep(body.sample);
        failed(`${why}: ${(err as Error).message}`);
        return;
      }
      if (mine !== generation) return;
      if (answer.status === 401) {
        status.state = 'revoked';
        status.last_error =
          'the console refused the daemon token (HTTP 401): the enrolment was revoked or the server removed';
        status.next_attempt_at = null;
        status.backoff_s = null;
        log('error', `check-in: ${status.last_error}. Check-ins stopped; enrol again with palisade-agent enroll`);
        return;
      }
      if (answer.status === 400 && past.length > 0) {
        // A console that refuses the buffered samples (an older one, or a bad one among them) must
        // not keep the server offline: drop what was sent and check in again at once.
        buffer.splice(0, past.length);
        status.buffered_samples = buffer.length;
        log('warn', `check-in: the console refused ${past.length} buffered samples${errorText(answer.body)}; dropped`);
        planMs(0);
        return;
      }
      if (answer.status < 200 || answer.status > 299) {
        keep(body.sample);
        failed(`the console answered HTTP ${answer.status}${errorText(answer.body)}`);
        return;
      }
      buffer.splice(0, past.length);
      status.buffered_samples = buffer.length;
      opts.delivered?.(body);
      const data = parseAnswer(answer.body);
      if (data.intervalS !== null) consoleIntervalS = data.intervalS;
      for (const job of data.jobs) opts.jobs.accept(job);
      if (data.update !== undefined) opts.offered?.(data.update);
      if (status.consecutive_failures > 0) log('info', 'check-in: the console answers again');
      status.consecutive_failures = 0;
      status.backoff_s = null;
      status.last_error = null;
      status.last_success_at = clock();
      status.state = 'ok';
      status.interval_s = interval();
      if (again) planMs(SOON_MS);
      else if (buffer.length > 0) planMs(DRAIN_MS);
      else plan(interval());
      again = false;
    } finally {
      inFlight = false;
    }
  }

  return {
    start(next) {
      generation++;
      cancel?.();
      enrolment = next;
      consoleIntervalS = null;
      Object.assign(status, {
        enrolled: true,
        console_url: next.console_url,
        state: 'starting',
        interval_s: settings.intervalS,
        last_error: null,
        consecutive_failures: 0,
        backoff_s: null,
        buffered_samples: 0,
      });
      buffer.length = 0; // a new enrolment may be another server of another console
      inFlight = false;
      plan(0);
    },
    stop() {
      generation++;
      cancel?.();
      cancel = null;
    },
    configure(next) {
      settings = next;
      status.interval_s = interval();
    },
    status: () => ({ ...status }),
    attempt,
    soon() {
      if (!enrolment || status.state === 'revoked' || status.consecutive_failures > 0) return;
      if (inFlight) {
        again = true;
        return;
      }
      if (status.next_attempt_at === null || status.next_attempt_at > clock() + SOON_MS) planMs(SOON_MS);
    },
  };
}

function errorText(body: string): string {
  try {
    const parsed = JSON.parse(body) as { error?: unknown };
    if (typeof parsed.error === 'string') return `: ${parsed.error.slice(0, 200)}`;
  } catch {}
  return '';
}

/**
 * `{data:{interval_s, jobs, update}}`; anything missing or odd is ignored rather than trusted. The
 * update offer is passed on unchecked: the update module checks it (packages/agent/src/update/offer.ts).
 */
export function parseAnswer(body: string): { intervalS: number | null; jobs: unknown[]; update?: unknown } {
  let data: { interval_s?: unknown; jobs?: unknown; update?: unknown } = {};
  try {
    const parsed = JSON.parse(body) as { data?: unknown };
    if (parsed.data && typeof parsed.data === 'object') data = parsed.data as typeof data;
  } catch {}
  const i = data.interval_s;
  const intervalS = typeof i === 'number' && Number.isInteger(i) && i >= 1 && i <= 86_400 ? i : null;
  const jobs = Array.isArray(data.jobs) ? data.jobs : [];
  return data.update !== undefined && data.update !== null
    ? { intervalS, jobs, update: data.update }
    : { intervalS, jobs };
}
