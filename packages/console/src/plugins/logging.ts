import type { FastifyBaseLogger, FastifyServerOptions } from 'fastify';
import type { Bindings, ChildLoggerOptions } from 'pino';

const LEVELS: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };

/** Fields every line has, or that the readable form shows in its own place. */
const SHOWN = new Set(['level', 'time', 'pid', 'hostname', 'msg', 'req', 'res', 'err', 'responseTime', 'reqId']);

/**
 * One JSON log record as a line a person reads on a terminal:
 * `14:02:07.415 WARN  readiness: database is down (req-3) err=connect ECONNREFUSED`.
 */
export function readableLine(json: string): string {
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json.endsWith('\n') ? json : `${json}\n`;
  }
  const time = new Date(typeof record.time === 'number' ? record.time : Date.now()).toISOString().slice(11, 23);
  const level = (LEVELS[record.level as number] ?? String(record.level)).padEnd(5);
  const parts = [time, level, String(record.msg ?? '')];
  const req = record.req as { method?: string; url?: string } | undefined;
  if (req?.method) parts.push(`${req.method} ${req.url ?? ''}`);
  const res = record.res as { statusCode?: number } | undefined;
  if (res?.statusCode) parts.push(String(res.statusCode));
  if (typeof record.responseTime === 'number') parts.push(`${record.responseTime.toFixed(1)} ms`);
  if (record.reqId !== undefined) parts.push(`(${String(record.reqId)})`);
  for (const [k, v] of Object.entries(record)) {
    if (SHOWN.has(k) || v === undefined) continue;
    parts.push(`${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`);
  }
  let line = parts.join(' ');
  const err = record.err as { message?: string; stack?: string } | undefined;
  if (err) line += ` err=${err.message ?? ''}${err.stack ? `\n${err.stack}` : ''}`;
  return `${line}\n`;
}

/**
 * The console's logger (docs/deploy.md, "Logging"): JSON lines for a collector, or readable lines
 * when standard output is a terminal; secrets in headers are never written.
 */
export function loggerOptions(level: string, readable: boolean, out: NodeJS.WritableStream = process.stdout) {
  return {
    level,
    redact: {
      paths: ['req.headers.authorization', 'req.headers.cookie', 'req.headers["x-svc-key"]'],
      censor: '[hidden]',
    },
    ...(readable ? { stream: { write: (json: string) => out.write(readableLine(json)) } } : {}),
  } satisfies FastifyServerOptions['logger'];
}

type Call = (...args: unknown[]) => void;

/**
 * Fastify gives every request a child logger carrying its id; making one (pino serializes the
 * bindings) is a measurable part of a v1 request that then never logs (docs/performance.md). This
 * one is made the first time the request logs, with the same bindings: per request, one small
 * object and no serialization.
 */
class LazyChildLogger {
  #child: FastifyBaseLogger | undefined;
  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}
  #real(): FastifyBaseLogger {
    this.#child ??= this.parent.child(this.bindings, this.options);
    return this.#child;
  }
  get level() {
    return this.#child?.level ?? this.parent.level;
  }
  set level(level: string) {
    this.#real().level = level;
  }
  fatal(...args: unknown[]) {
    (this.#real().fatal as Call)(...args);
  }
  error(...args: unknown[]) {
    (this.#real().error as Call)(...args);
  }
  warn(...args: unknown[]) {
    (this.#real().warn as Call)(...args);
  }
  info(...args: unknown[]) {
    (this.#real().info as Call)(...args);
  }
  debug(...args: unknown[]) {
    (this.#real().debug as Call)(...args);
  }
  trace(...args: unknown[]) {
    (this.#real().trace as Call)(...args);
  }
  silent(...args: unknown[]) {
    (this.#real().silent as Call)(...args);
  }
  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.#real().child(bindings, options);
  }
}

/** Fastify's `childLoggerFactory`: see LazyChildLogger. */
export const lazyChildLogger = (logger: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions) =>
  new LazyChildLogger(logger, bindings, options) as unknown as FastifyBaseLogger;
