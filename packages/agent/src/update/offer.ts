import { basename, dirname, join } from 'node:path';
import {
  UPDATE_HEALTH_TIMEOUT_MAX_S,
  UPDATE_HEALTH_TIMEOUT_MIN_S,
  type UpdateOffer,
} from '@palisade/protocol/agent-update';
import { present } from './update-files.js';

/** A release version as the packages are named (scripts/package.mjs checks the same form). */
export const RELEASE_VERSION = /^\d+\.\d+\.\d+(-[0-9A-Za-z.]{1,32})?$/;

/** The artifact names of a version, as SHA256SUMS and `/install/` name them. */
export const exeArtifact = (version: string) => `palisade-agent-${version}-linux-x64`;
export const mjsArtifact = (version: string) => `palisade-agent-${version}.mjs`;

/**
 * The offer in a check-in answer, checked by hand (the agent does not load zod): every field as
 * packages/protocol/src/agent-update-schemas.ts has it, and each path exactly the `/install/` file
 * of that version, so the console's answer never names another URL or file for the agent to fetch.
 */
export function readOffer(raw: unknown): { offer: UpdateOffer } | { error: string } {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return { error: 'update: expected an object' };
  const o = raw as Record<string, unknown>;
  const id = o.rollout_id;
  if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 1)
    return { error: 'update.rollout_id: expected a positive whole number' };
  const version = o.version;
  if (typeof version !== 'string' || !RELEASE_VERSION.test(version))
    return { error: 'update.version: expected a version such as 0.2.0 or 0.2.0-rc.1' };
  const expected: Record<string, string> = {
    sums_path: '/install/SHA256SUMS',
    signature_path: '/install/SHA256SUMS.sig',
    exe_path: `/install/${exeArtifact(version)}`,
    mjs_path: `/install/${mjsArtifact(version)}`,
  };
  for (const [field, path] of Object.entries(expected)) {
    if (o[field] !== path) return { error: `update.${field}: expected ${path}` };
  }
  const timeout = o.health_timeout_s;
  if (
    typeof timeout !== 'number' ||
    !Number.isInteger(timeout) ||
    timeout < UPDATE_HEALTH_TIMEOUT_MIN_S ||
    timeout > UPDATE_HEALTH_TIMEOUT_MAX_S
  )
    return {
      error: `update.health_timeout_s: expected a whole number from ${UPDATE_HEALTH_TIMEOUT_MIN_S} to ${UPDATE_HEALTH_TIMEOUT_MAX_S}`,
    };
  return {
    offer: {
      rollout_id: id,
      version,
      sums_path: expected.sums_path!,
      signature_path: expected.signature_path!,
      exe_path: expected.exe_path!,
      mjs_path: expected.mjs_path!,
      health_timeout_s: timeout,
    },
  };
}

/** How this agent runs, which decides what an update replaces. */
export type AgentForm =
  /** The single executable (Node SEA): the new executable replaces `file`. */
  | { kind: 'exe'; file: string }
  /** The one-file bundle under Node: the new `.mjs` replaces `file`. */
  | { kind: 'mjs'; file: string }
  /** `dist/src/cli.js` of a source checkout: updated with git and npm, never by the console. */
  | { kind: 'checkout'; file: string };

/**
 * This process's form. node:sea is loaded here only (an idle agent never loads it:
 * packages/agent/test/lazy-modules.test.ts).
 */
export function agentForm(
  execPath = process.execPath,
  script = process.argv[1] ?? '',
  isSea = () => process.getBuiltinModule('node:sea').isSea(),
): AgentForm {
  if (isSea()) return { kind: 'exe', file: execPath };
  if (/^palisade-agent-.+\.mjs$/.test(basename(script))) return { kind: 'mjs', file: script };
  if (script.endsWith('.mjs') && !insideCheckout(script)) return { kind: 'mjs', file: script };
  return { kind: 'checkout', file: script };
}

/** Whether a directory above `file` holds a `.git` or a `package-lock.json`: a source checkout. */
function insideCheckout(file: string): boolean {
  let dir = dirname(file);
  for (let i = 0; i < 8; i++) {
    if (present(join(dir, '.git')) || present(join(dir, 'package-lock.json'))) return true;
    const up = dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  return false;
}
