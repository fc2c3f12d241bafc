import { randomUUID } from 'node:crypto';
import { signatureHeader } from '@palisade/protocol/webhook-signature';
import type { AlertPayload, AlertType, AttackDetails } from '@palisade/protocol/webhooks';
import type { AgentDeps } from '../deps.js';
import { OutboundError, type PostJson } from '../lib/outbound.js';

export type { AlertPayload, AttackDetails };

/** What the protection engine hands the alerter; the webhook body is `AlertPayload` (packages/protocol/src/webhooks.ts). */
export interface AlertEvent {
  type: AlertType;
  attack: AttackDetails | null;
}

export interface AlerterSettings {
  url: string | null;
  secret: string | null;
  queueMax: number;
  timeoutMs: number;
  retries: number;
  backoffMs: number;
}

/** The `alerter` part of /metrics. */
export interface AlerterState {
  webhook_set: boolean;
  queued: number;
  sent: number;
  dropped: number;
  last_success_at: number | null;
  last_error: string | null;
  last_error_at: number | null;
}

export interface Alerter {
  /** Queues an event; false when no webhook is set or the queue is full (then it is counted as dropped). */
  enqueue(event: AlertEvent): { accepted: boolean; id: string | null };
  state(): AlerterState;
  configure(settings: AlerterSettings): void;
  stop(): void;
}

const MAX_BACKOFF_MS = 60_000;

/**
 * A bounded queue with one delivery worker. An event is retried `retries` times with doubling
 * pauses; after the last failed try it is dropped and counted, as is an event that finds the queue full.
 * `queued` counts every event not yet delivered or dropped, including the one being sent.
 */
export function createAlerter(opts: {
  deps: AgentDeps;
  settings: AlerterSettings;
  host: () => { hostname: string; public_ip: string | null };
  post: PostJson;
  log: (level: 'info' | 'warn', message: string) => void;
}): Alerter {
  const { deps, post, log } = opts;
  let settings = opts.settings;
  const queue: { payload: AlertPayload; body: string }[] = [];
  let sent = 0;
  let dropped = 0;
  let lastSuccessAt: number | null = null;
  let lastError: string | null = null;
  let lastErrorAt: number | null = null;
  let working = false;
  let stopped = false;
  let wake: (() => void) | null = null;
  let pause: NodeJS.Timeout | undefined;

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      wake = resolve;
      pause = setTimeout(resolve, ms);
    });

  async function deliver(body: string): Promise<string | null> {
    const url = settings.url;
    if (!url) return 'no webhook URL is set (alerter.url)';
    const headers: Record<string, string> = {};
    if (settings.secret)
      headers['x-palisade-signature'] = signatureHeader(settings.secret, body, Math.floor(deps.clock() / 1000));
    try {
      const answer = await post(url, body, headers, settings.timeoutMs);
      if (answer.status >= 200 && answer.status < 300) return null;
      return `the endpoint answered HTTP ${answer.status}`;
    } catch (err) {
      if (err instanceof OutboundError && err.kind === 'timeout')
        return `the endpoint did not answer within ${settings.timeoutMs} ms`;
      return `could not reach the endpoint: ${(err as Error).message}`;
    }
  }

  async function work() {
    if (working) return;
    working = true;
    try {
      while (!stopped && queue.length > 0) {
        const head = queue[0]!;
        let attempt = 0;
        for (;;) {
          const error = await deliver(head.body);
          if (stopped) return;
          if (error === null) {
            sent++;
            lastSuccessAt = deps.clock();
            break;
          }
          lastError = error;
          lastErrorAt = deps.clock();
          if (attempt >= settings.retries) {
            dropped++;
            log('warn', `alerter: event ${head.payload.id} dropped after ${attempt + 1} tries: ${error}`);
            break;
          }
          await sleep(Math.min(MAX_BACKOFF_MS, settings.backoffMs * 2 ** attempt));
          attempt++;
          if (stopped) return;
        }
        queue.shift();
      }
    } finally {
      working = false;
    }
  }

  return {
    enqueue(event) {
      if (!settings.url || stopped) return { accepted: false, id: null };
      if (queue.length >= settings.queueMax) {
        dropped++;
        return { accepted: false, id: null };
      }
      const hostInfo = opts.host();
      const payload: AlertPayload = {
        id: randomUUID(),
        type: event.type,
        ts: deps.clock(),
        host: { hostname: hostInfo.hostname, public_ip: hostInfo.public_ip },
        attack: event.attack,
      };
      queue.push({ payload, body: JSON.stringify(payload) });
      void work();
      return { accepted: true, id: payload.id };
    },
    state() {
      return {
        webhook_set: settings.url !== null,
        queued: queue.length,
        sent,
        dropped,
        last_success_at: lastSuccessAt,
        last_error: lastError,
        last_error_at: lastErrorAt,
      };
    },
    configure(next) {
      settings = next;
      if (queue.length > 0) void work();
    },
    stop() {
      stopped = true;
      clearTimeout(pause);
      wake?.();
    },
  };
}
