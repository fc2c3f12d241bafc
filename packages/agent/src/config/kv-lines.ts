/**
 * One line of a `key = value` file, the one format of the agent's config (docs/agent.md, "Config
 * file"): blank lines and `#`/`;` comments are skipped, a value may be quoted with `"` or `'`.
 */
export type KvLine = { kind: 'skip' } | { kind: 'pair'; key: string; value: string } | { kind: 'bad'; text: string };

export function readKvLine(raw: string): KvLine {
  const line = raw.trim();
  if (line === '' || line.startsWith('#') || line.startsWith(';')) return { kind: 'skip' };
  const eq = line.indexOf('=');
  if (eq < 0) return { kind: 'bad', text: line };
  const value = line.slice(eq + 1).trim();
  const quoted = /^"(.*)"$/.exec(value) ?? /^'(.*)'$/.exec(value);
  return { kind: 'pair', key: line.slice(0, eq).trim(), value: quoted ? quoted[1]! : value };
}

/** The lines of a file's text, as written (a trailing newline adds no line). */
export function textLines(text: string): string[] {
  return text === '' ? [] : text.replace(/\r?\n$/, '').split(/\r?\n/);
}
