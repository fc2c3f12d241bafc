import type { FastifyServerOptions } from 'fastify';

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
