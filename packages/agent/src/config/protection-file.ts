// `POST /config`: changes to the config file, validated like the file itself and written whole.
import { existsSync, readFileSync } from 'node:fs';
import type { ConfigChangeBody } from '@palisade/protocol/control-schemas/standalone';
import { isInside, parseClientAddress } from '../lib/ip-ranges.js';
import { InputError } from '../lib/net.js';
import { CONTROL_CHARACTERS } from '../lib/text.js';
import { writeFileAtomic } from '../state/state-dir.js';
import { CONFIG_KEYS, ConfigError, parseConfig, SECRET_KEYS } from './config.js';
import { readKvLine, textLines } from './kv-lines.js';

/** Reads the `key = value` lines of the file as written (comments and unknown lines left out). */
export function readConfigValues(file: string): Record<string, string> {
  if (!existsSync(file)) return {};
  const out: Record<string, string> = {};
  for (const raw of textLines(readFileSync(file, 'utf8'))) {
    const line = readKvLine(raw);
    if (line.kind === 'pair') out[line.key] = line.value;
  }
  return out;
}

/** What answers show instead of a secret that is set (docs/agent.md, "Secrets"). */
export const SECRET_MASK = '********';

/** The values with every secret replaced by SECRET_MASK (an empty one stays empty). */
export function maskSecrets(values: Record<string, string>): Record<string, string> {
  const out = { ...values };
  for (const key of SECRET_KEYS) if (out[key]) out[key] = SECRET_MASK;
  return out;
}

/** Replaces or appends `key = value` lines (a null value removes the key); comments stay where they are. */
export function editConfigText(text: string, changes: Record<string, string | null>): string {
  const done = new Set<string>();
  const out: string[] = [];
  for (const line of textLines(text)) {
    const parsed = readKvLine(line);
    const key = parsed.kind === 'pair' && parsed.key !== '' ? parsed.key : null;
    if (key !== null && Object.hasOwn(changes, key)) {
      if (done.has(key)) continue;
      done.add(key);
      const v = changes[key];
      if (v !== null && v !== undefined) out.push(`${key} = ${v}`);
      continue;
    }
    out.push(line);
  }
  for (const [key, v] of Object.entries(changes)) if (!done.has(key) && v !== null) out.push(`${key} = ${v}`);
  return `${out.join('\n')}\n`;
}

/** Validates `{ "dotted.key": value | null, … }` against the file's parser and writes the file. */
export function applyConfigChanges(
  file: string,
  body: ConfigChangeBody,
  check?: (next: ReturnType<typeof parseConfig>) => void,
): { changed: string[] } {
  const changes: Record<string, string | null> = {};
  for (const [key, value] of Object.entries(body)) {
    if (!CONFIG_KEYS.includes(key)) throw new InputError(`${key.slice(0, 60)}: unknown config key`);
    const items = Array.isArray(value) ? value : [value];
    // None belongs in a one-line value; a newline would start a new `key = value` line in the file.
    if (items.some((v) => typeof v === 'string' && CONTROL_CHARACTERS.test(v)))
      throw new InputError(
        `${key}: a value may not contain control characters (line breaks, tabs, \\x00-\\x1f, \\x7f)`,
      );
    // A masked secret sent back (a GET answer posted whole) keeps the stored secret.
    if (SECRET_KEYS.includes(key) && value === SECRET_MASK) continue;
    changes[key] = value === null ? null : items.map(String).join(', ');
  }
  const before = existsSync(file) ? readFileSync(file, 'utf8') : '';
  const after = editConfigText(before, changes);
  let next: ReturnType<typeof parseConfig>;
  try {
    next = parseConfig(after, file);
  } catch (err) {
    if (err instanceof ConfigError) throw new InputError(err.problems.map((p) => p.message).join('; '));
    throw err;
  }
  check?.(next);
  // It may hold alerter.secret: readable by the agent's user only, whatever the mode was before.
  writeFileAtomic(file, after, 0o600);
  return { changed: Object.keys(changes) };
}

/** What the `config` control path offers: the file and protection state, and validated changes. */
export interface ConfigAccess {
  read: () => unknown;
  change: (body: ConfigChangeBody, client: string | undefined) => unknown;
}

/** The protection state shown beside the file's values (the engine provides it). */
export interface ProtectionSummary {
  settingsSummary(): unknown;
  autofetchState(): unknown;
  geoMode(): unknown;
  enforcement(): unknown;
}

/** The `config` control path: what the file says and the protection state, and validated changes followed by a reload. */
export function configAccess(
  file: string,
  engine: ProtectionSummary,
  reload: () => { ok: boolean; error: string | null },
): ConfigAccess {
  return {
    read: () => ({
      file,
      values: maskSecrets(readConfigValues(file)),
      protection: engine.settingsSummary(),
      autofetch: engine.autofetchState(),
      geo: engine.geoMode(),
      enforcement: engine.enforcement(),
    }),
    change: (body, client) => {
      const result = applyConfigChanges(file, body, (next) => {
        const address = client ? parseClientAddress(client) : null;
        if (address && next.metrics.whitelist.length > 0 && !isInside(address, next.metrics.whitelist))
          throw new InputError(`metrics.whitelist: would lock out ${address.text}, the address making this change`);
      });
      const reloaded = reload();
      if (!reloaded.ok) throw new InputError(`written, but the reload failed: ${reloaded.error}`);
      return { ...result, reloaded: true };
    },
  };
}
