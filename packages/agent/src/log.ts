export type LogLevel = 'info' | 'warn' | 'error';
export type Log = (level: LogLevel, message: string) => void;

/** One line per message: info to stdout, warnings and errors to stderr (journald keeps both). */
export function streamLog(
  out: NodeJS.WritableStream = process.stdout,
  err: NodeJS.WritableStream = process.stderr,
): Log {
  return (level, message) => {
    (level === 'info' ? out : err).write(`${new Date().toISOString()} ${level} ${message}\n`);
  };
}
