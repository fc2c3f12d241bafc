export type LogLevel = 'info' | 'warn' | 'error';
export type Log = (level: LogLevel, message: string) => void;

/** A secret's prefix and body, as packages/protocol/src/tokens.ts makes them (agent keys, daemon and enrolment tokens, …). */
const SECRET = /\b(svc|svck|dmn|bmt|agk|enr)_[0-9A-Za-z]{8,}/g;

/** `text` with every secret cut to its prefix: no key or token ever reaches a log (docs/security.md). */
export function redactSecrets(text: string): string {
  return text.replace(SECRET, '$1_…');
}

/** One line per message: info to stdout, warnings and errors to stderr (journald keeps both). */
export function streamLog(
  out: NodeJS.WritableStream = process.stdout,
  err: NodeJS.WritableStream = process.stderr,
): Log {
  return (level, message) => {
    (level === 'info' ? out : err).write(`${new Date().toISOString()} ${level} ${redactSecrets(message)}\n`);
  };
}
