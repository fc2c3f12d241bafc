import { readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { FINGERPRINT_EXPECTED, normalizeFingerprint } from '@palisade/protocol/agent-address';
import { AgentClient } from './agent.js';
import { SignedClient } from './signed.js';
import { V1Client } from './v1.js';

// Where the `palisade` CLI's credentials come from (cli.ts has the commands): the flags, the
// environment, the config file and its team profiles (docs/api.md, "The CLI").

/** A wrong command line or setting: exit code 2 (`EXIT.usage` in cli.ts). */
export class UsageError extends Error {}

/** One team's credentials in the config file: `teams: {"acme": {id, token, key}}`. */
interface TeamProfile {
  id?: number;
  token?: string;
  key?: string;
}

interface Settings {
  url?: string;
  token?: string;
  key?: string;
  agent_url?: string;
  agent_key?: string;
  agent_fingerprint?: string;
  team?: string | number;
  teams?: Record<string, TeamProfile>;
}

const TEAM_ID = /^[1-9][0-9]{0,15}$/;

/** The `teams` profiles must be what the CLI reads: a wrong one is named, not half used. */
function checkProfiles(teams: unknown, path: string): void {
  const wrong = (field: string, expected: string) =>
    new UsageError(`config file ${path}: ${field}: expected ${expected}`);
  if (teams === undefined) return;
  if (teams === null || typeof teams !== 'object' || Array.isArray(teams))
    throw wrong('teams', 'an object of profiles, {"<name>": {"id": 7, "token": "svc_…", "key": "svck_…"}}');
  for (const [name, profile] of Object.entries(teams)) {
    if (profile === null || typeof profile !== 'object' || Array.isArray(profile))
      throw wrong(`teams.${name}`, 'an object with id, token, key');
    const { id, token, key } = profile as Record<string, unknown>;
    if (id !== undefined && !(typeof id === 'number' && TEAM_ID.test(String(id))))
      throw wrong(`teams.${name}.id`, 'a team id (a positive integer)');
    if (token !== undefined && typeof token !== 'string') throw wrong(`teams.${name}.token`, 'a string');
    if (key !== undefined && typeof key !== 'string') throw wrong(`teams.${name}.key`, 'a string');
  }
}

function readConfigFile(path: string, explicit: boolean): Settings {
  let mode: number;
  try {
    mode = statSync(path).mode;
  } catch {
    if (explicit) throw new UsageError(`config file ${path} does not exist`);
    return {};
  }
  if ((mode & 0o077) !== 0) {
    throw new UsageError(`config file ${path} is readable by others; it holds secrets: run chmod 600 ${path}`);
  }
  let settings: Settings;
  try {
    settings = JSON.parse(readFileSync(path, 'utf8')) as Settings;
  } catch (err) {
    throw new UsageError(`config file ${path} is not valid JSON: ${(err as Error).message}`);
  }
  checkProfiles(settings.teams, path);
  return settings;
}

/** The team a command acts in: its id when known (sent as X-Palisade-Team) and the profile naming it. */
export interface ChosenTeam {
  id?: number;
  profile?: string;
  credentials?: TeamProfile;
}

/**
 * `--team` is a profile's name, or a team id: the profile with that `id` when there is one (its
 * credentials), else the other credentials acting in that team.
 */
function chosenTeam(value: string | undefined, file: Settings, path: string): ChosenTeam {
  if (value === undefined || value === '') return {};
  const profiles = file.teams ?? {};
  const numeric = TEAM_ID.test(value);
  const profile = Object.hasOwn(profiles, value)
    ? value
    : Object.keys(profiles).find((name) => numeric && profiles[name]!.id === Number(value));
  if (profile !== undefined) {
    const credentials = profiles[profile]!;
    const id = credentials.id ?? (numeric ? Number(value) : undefined);
    return { ...(id !== undefined ? { id } : {}), profile, credentials };
  }
  if (numeric) return { id: Number(value) };
  const names = Object.keys(profiles);
  throw new UsageError(
    `--team ${value}: expected a team id (a positive integer) or a profile of ${path} (${names.length ? names.join(', ') : 'it has no "teams"'})`,
  );
}

/** How a team is named in messages: `team 7 (profile acme)`. */
export const teamText = (team: ChosenTeam) =>
  `team ${team.id ?? '?'}${team.profile !== undefined && team.profile !== String(team.id) ? ` (profile ${team.profile})` : ''}`;

export function positiveId(value: string | undefined, what: string): number {
  if (!value || !/^[1-9][0-9]{0,15}$/.test(value)) throw new UsageError(`${what}: expected a positive integer`);
  return Number(value);
}

export function need(value: string | undefined, what: string): string {
  if (!value) throw new UsageError(`${what} is needed for this command`);
  return value;
}

/** The command-line flags that name a console, an agent or their credentials (cli.ts parses them). */
export interface CredentialFlags {
  url?: string | undefined;
  token?: string | undefined;
  key?: string | undefined;
  'agent-url'?: string | undefined;
  'agent-key'?: string | undefined;
  'agent-fingerprint'?: string | undefined;
  config?: string | undefined;
  team?: string | undefined;
  timeout?: string | undefined;
  'no-retry'?: boolean | undefined;
}

/**
 * Flag, then environment, then the config file: where each setting comes from. A team profile's
 * token and key stand in for the environment's and the file's: naming the team names its credentials.
 */
function settingsOf(o: CredentialFlags, env: NodeJS.ProcessEnv) {
  const configPath =
    o.config ??
    env.PALISADE_CONFIG ??
    join(env.XDG_CONFIG_HOME ?? join(homedir(), '.config'), 'palisade', 'config.json');
  const file = readConfigFile(configPath, Boolean(o.config ?? env.PALISADE_CONFIG));
  const setting = (flag: string | undefined, name: string, fileValue: string | undefined) =>
    flag ?? env[name] ?? fileValue;
  const team = chosenTeam(setting(o.team, 'PALISADE_TEAM', file.team?.toString()), file, configPath);
  const credential = (flag: string | undefined, name: string, field: 'token' | 'key') =>
    team.credentials ? (flag ?? team.credentials[field]) : setting(flag, name, file[field]);
  return {
    team,
    configPath,
    url: setting(o.url, 'PALISADE_URL', file.url),
    token: credential(o.token, 'PALISADE_TOKEN', 'token'),
    key: credential(o.key, 'PALISADE_KEY', 'key'),
    agentUrl: setting(o['agent-url'], 'PALISADE_AGENT_URL', file.agent_url),
    agentKey: setting(o['agent-key'], 'PALISADE_AGENT_KEY', file.agent_key),
    agentFingerprint: setting(o['agent-fingerprint'], 'PALISADE_AGENT_FINGERPRINT', file.agent_fingerprint),
  };
}

/** The three clients, each made only when a command needs it (so a missing setting is named then). */
export function clientsOf(o: CredentialFlags, env: NodeJS.ProcessEnv) {
  const s = settingsOf(o, env);
  const timeoutMs = o.timeout ? positiveId(o.timeout, '--timeout') : undefined;
  const common = { retryOn429: !o['no-retry'], ...(timeoutMs ? { timeoutMs } : {}) };
  const consoleUrl = () => need(s.url, '--url (or PALISADE_URL)');
  const where = (flag: string, name: string, field: string) =>
    s.team.profile !== undefined
      ? `${flag} (or "${field}" in the profile teams.${s.team.profile} of ${s.configPath})`
      : `${flag} (or ${name})`;
  const token = () => need(s.token, where('--token', 'PALISADE_TOKEN', 'token'));
  const key = () => need(s.key, where('--key', 'PALISADE_KEY', 'key'));
  const inTeam = s.team.id !== undefined ? { team: s.team.id } : {};
  /** Which console credentials a command used, to ask each its own team after a 404. */
  const used = new Set<'token' | 'signing key'>();
  return {
    team: s.team,
    v1: () => {
      used.add('token');
      return new V1Client({ baseUrl: consoleUrl(), token: token(), ...common, ...inTeam });
    },
    signed: () => {
      used.add('signing key');
      return new SignedClient({ baseUrl: consoleUrl(), key: key(), ...common, ...inTeam });
    },
    /**
     * After a 404 with a team named: the first credential used whose own team is another, and that
     * team, read from `me` without naming any (docs/api.md, "The CLI"); null when each is in it.
     */
    async otherTeam() {
      if (s.team.id === undefined) return null;
      for (const what of used) {
        const me = await (what === 'token'
          ? new V1Client({ baseUrl: consoleUrl(), token: token(), ...common }).me()
          : new SignedClient({ baseUrl: consoleUrl(), key: key(), ...common }).me()
        ).catch(() => null);
        if (me && me.team.id !== s.team.id) return { what, team: me.team };
      }
      return null;
    },
    agent: () => {
      const baseUrl = need(s.agentUrl, '--agent-url (or PALISADE_AGENT_URL)');
      const key = need(s.agentKey, '--agent-key (or PALISADE_AGENT_KEY)');
      if (s.agentFingerprint !== undefined) {
        if (!normalizeFingerprint(s.agentFingerprint))
          throw new UsageError(`--agent-fingerprint: ${FINGERPRINT_EXPECTED}`);
        if (!/^https:\/\//i.test(baseUrl)) throw new UsageError('--agent-fingerprint: only for an https agent address');
      }
      return new AgentClient({
        baseUrl,
        key,
        ...(s.agentFingerprint !== undefined ? { fingerprint: s.agentFingerprint } : {}),
        ...common,
      });
    },
  };
}
