import http from 'node:http';
import type { NetworkLink } from './network.js';

/** A console answer other than 2xx to one of the run's reports. */
export class ConsoleRefused extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'ConsoleRefused';
  }
}

/** The run's calls to the console, all with `Authorization: Bearer bmt_…`. */
export interface RunLink extends NetworkLink {
  report(what: 'start' | 'log' | 'result', body: unknown): Promise<void>;
  close(): void;
}

const REPORT_TIMEOUT_MS = 15_000;
const TRANSFER_TIMEOUT_MS = 60_000;
const MAX_ANSWER = 64 * 1024;

/** `runUrl` is `<console_url><report_path>`; one kept-alive connection serves the whole run. */
export function consoleRunLink(runUrl: string, token: string): RunLink {
  const base = new URL(runUrl);
  const client = base.protocol === 'https:' ? process.getBuiltinModule('node:https') : http;
  const agent = new client.Agent({ keepAlive: true, maxSockets: 1 });

  function call(
    method: 'GET' | 'POST',
    path: string,
    body: Buffer | null,
    contentType: string | null,
    timeoutMs: number,
    signal?: AbortSignal,
  ): Promise<{ status: number; bytes: number; text: string }> {
    return new Promise((resolve, reject) => {
      const target = new URL(`${base.pathname}${path}`, base);
      const req = client.request(target, {
        method,
        agent,
        ...(signal ? { signal } : {}),
        headers: {
          authorization: `Bearer ${token}`,
          'user-agent': 'palisade-agent',
          ...(contentType ? { 'content-type': contentType } : {}),
          ...(body ? { 'content-length': body.length } : { 'content-length': 0 }),
        },
      });
      const timer = setTimeout(() => req.destroy(new Error(`no answer within ${timeoutMs / 1000} s`)), timeoutMs);
      req.on('response', (res) => {
        let bytes = 0;
        const kept: Buffer[] = [];
        res.on('data', (c: Buffer) => {
          bytes += c.length;
          if (bytes <= MAX_ANSWER) kept.push(c);
        });
        res.on('end', () => {
          clearTimeout(timer);
          resolve({ status: res.statusCode ?? 0, bytes, text: Buffer.concat(kept).toString('utf8') });
        });
        res.on('error', (err) => {
          clearTimeout(timer);
          reject(err);
        });
      });
      req.on('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
      req.end(body ?? undefined);
    });
  }

  function expectOk(answer: { status: number; text: string }, what: string) {
    if (answer.status >= 200 && answer.status < 300) return;
    let why = '';
    try {
      const parsed = JSON.parse(answer.text) as { error?: unknown };
      if (typeof parsed.error === 'string') why = `: ${parsed.error.slice(0, 300)}`;
    } catch {}
    throw new ConsoleRefused(answer.status, `the console refused ${what} (HTTP ${answer.status})${why}`);
  }

  return {
    async report(what, body) {
      const answer = await call(
        'POST',
        `/${what}`,
        Buffer.from(JSON.stringify(body)),
        'application/json',
        REPORT_TIMEOUT_MS,
      );
      expectOk(answer, what);
    },
    async ping(signal) {
      expectOk(await call('GET', '/ping', null, null, REPORT_TIMEOUT_MS, signal), 'ping');
    },
    async download(bytes, signal) {
      const answer = await call('GET', `/payload?bytes=${bytes}`, null, null, TRANSFER_TIMEOUT_MS, signal);
      expectOk(answer, 'the download');
      return answer.bytes;
    },
    async upload(payload, signal) {
      const answer = await call('POST', '/payload', payload, 'application/octet-stream', TRANSFER_TIMEOUT_MS, signal);
      expectOk(answer, 'the upload');
    },
    close() {
      agent.destroy();
    },
  };
}
