#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { isControlPath } from '@palisade/protocol/control';
import { CONTROL_PATHS } from './agent.js';
import { clientsOf, need, positiveId, teamText, UsageError } from './cli-settings.js';
import { PalisadeError, PalisadeNetworkError } from './errors.js';

/** This CLI's version: its package's (package.json sits two levels above dist/src/cli.js, also in the npm tarball). */
const VERSION: string = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version;

/** Exit codes scripts can tell apart. */
export const EXIT = { ok: 0, failed: 1, usage: 2, auth: 3, notFound: 4, rateLimited: 5, unreachable: 6 } as const;

const HELP = `palisade: the Palisade console and agent from the command line

Usage:
  palisade me                                   the token's person, team and role there (v1)
  palisade servers list                         your servers (v1)
  palisade servers show <id>                    one server with its score parts (v1)
  palisade benchmarks list <server-id>          finished benchmark runs (v1)
  palisade tickets list                         your support tickets (signed)
  palisade tickets open --product <id> --subject <text> --message <text>
  palisade tickets reply <ticket-id> --message <text>
  palisade agents update [--tag <tag>] [--waves 1,10%,100%] [--health-timeout <s>]
                                                update the agents to the version the console
                                                serves, in waves (signed)
  palisade agents updates                       the served version and the rollouts (signed)
  palisade agents update-status <rollout-id>    a rollout, server by server (signed)
  palisade agents update-cancel <rollout-id>    cancel a running rollout (signed)
  palisade agent health | metrics               an agent, directly with its key
  palisade agent control <path> [--method GET|POST|DELETE] [--data <json>] [--ip <ip>]

Credentials (flag, then environment, then the config file):
  --url        PALISADE_URL        console address, e.g. https://console.example.com
  --token      PALISADE_TOKEN      personal access token svc_… (v1 commands)
  --key        PALISADE_KEY        signing key svck_… (tickets, agents update…)
  --agent-url  PALISADE_AGENT_URL  agent address
  --agent-key  PALISADE_AGENT_KEY  agent key agk_…
  --agent-fingerprint PALISADE_AGENT_FINGERPRINT
                                   SHA-256 of an https agent's own certificate (it prints it)
  --team       PALISADE_TEAM       the team to act in: its id, or a profile of the config
                                   file's "teams" (whose token and key are then used)
  --config     PALISADE_CONFIG     JSON file with url, token, key, agent_url, agent_key,
                                   agent_fingerprint, team, and teams: {"<name>": {id, token, key}}
                                   (default ~/.config/palisade/config.json; must be mode 0600)

Output: tables for people; --json for scripts. --no-retry turns off waiting on 429.
-V, --version prints this CLI's version; -h, --help this text.
Exit codes: 0 ok, 1 error, 2 usage, 3 authentication, 4 not found, 5 rate limited, 6 unreachable.`;

/** The credential names another team than the one named: the console answered 404 (docs/teams.md). */
class TeamMismatch extends Error {}

function table(rows: Record<string, unknown>[], columns: string[]): string {
  if (rows.length === 0) return '(none)';
  const cells = rows.map((r) => columns.map((c) => (r[c] === null || r[c] === undefined ? '-' : String(r[c]))));
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((row) => row[i]!.length)));
  const line = (values: string[]) =>
    values
      .map((v, i) => v.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [line(columns.map((c) => c.toUpperCase())), ...cells.map(line)].join('\n');
}

/** Megabytes as people read them: 512 MB, 49.9 GB, 1.8 TB. */
function size(mb: number): string {
  if (mb >= 1024 * 1024) return `${(mb / 1024 / 1024).toFixed(1)} TB`;
  if (mb >= 1024) return `${(mb / 1024).toFixed(1)} GB`;
  return `${Math.round(mb)} MB`;
}

/** One fact for people: disks as `mount fs size`, other lists and objects as compact JSON, never `[object Object]`. */
function factText(key: string, value: unknown): string {
  if (key === 'disks' && Array.isArray(value)) {
    return value
      .map((d: { mount?: unknown; fs?: unknown; total_mb?: unknown }) =>
        [d.mount, d.fs, typeof d.total_mb === 'number' ? size(d.total_mb) : null].filter((p) => p != null).join(' '),
      )
      .join(', ');
  }
  return value !== null && typeof value === 'object' ? JSON.stringify(value) : String(value);
}

const ago = (ms: number) => (ms === 0 ? 'never' : new Date(ms).toISOString().replace('T', ' ').slice(0, 19));

const OPTIONS = {
  url: { type: 'string' },
  token: { type: 'string' },
  key: { type: 'string' },
  'agent-url': { type: 'string' },
  'agent-key': { type: 'string' },
  'agent-fingerprint': { type: 'string' },
  config: { type: 'string' },
  team: { type: 'string' },
  json: { type: 'boolean', default: false },
  'no-retry': { type: 'boolean', default: false },
  timeout: { type: 'string' },
  product: { type: 'string' },
  subject: { type: 'string' },
  message: { type: 'string' },
  method: { type: 'string' },
  data: { type: 'string' },
  ip: { type: 'string' },
  tag: { type: 'string' },
  waves: { type: 'string' },
  'health-timeout': { type: 'string' },
  help: { type: 'boolean', short: 'h', default: false },
  version: { type: 'boolean', short: 'V', default: false },
} as const;

const parseCommandLine = (argv: string[]) =>
  parseArgs({ args: argv, allowPositionals: true, strict: true, options: OPTIONS });
type Options = ReturnType<typeof parseCommandLine>['values'];

interface Command {
  o: Options;
  clients: ReturnType<typeof clientsOf>;
  /** JSON with --json, else the human form. */
  print(value: unknown, human: () => string): void;
}

/** `me`, `servers …`, `benchmarks list`: the v1 API with a personal token. */
async function readCommand(name: string, arg: string | undefined, { clients, print }: Command): Promise<boolean> {
  switch (name) {
    case 'me': {
      const me = await clients.v1().me();
      print(
        me,
        () =>
          `${me.name} <${me.email}> (${me.role}, account ${me.id})\nteam ${me.team.id} (${me.team.name}), role ${me.team.role}`,
      );
      return true;
    }
    case 'servers list': {
      const servers = await clients.v1().servers();
      print(servers, () =>
        table(
          servers.map((x) => ({ ...x, online: x.online ? 'yes' : 'no', last_seen: ago(x.last_seen) })),
          ['id', 'label', 'hostname', 'online', 'score', 'last_seen', 'public_ip'],
        ),
      );
      return true;
    }
    case 'servers show': {
      const x = await clients.v1().server(positiveId(arg, 'server id'));
      print(x, () =>
        [
          `${x.label} (${x.hostname}), ${x.online ? 'online' : 'offline'}, score ${x.score}/1000`,
          `last seen ${ago(x.last_seen)}, public IP ${x.public_ip ?? '-'}`,
          `components: ${Object.entries(x.score_components)
            .map(([k, v]) => `${k} ${v}`)
            .join(', ')}`,
          ...x.score_notes.map((n) => `  - ${n}`),
          `facts: ${Object.entries(x.facts)
            .map(([k, v]) => `${k}=${factText(k, v)}`)
            .join(' ')}`,
        ].join('\n'),
      );
      return true;
    }
    case 'benchmarks list': {
      const runs = await clients.v1().benchmarks(positiveId(arg, 'server id'));
      print(runs, () =>
        table(
          runs.map((r) => ({
            id: r.id,
            label: r.label,
            ...r.scores,
            verified: r.verified ? 'yes' : 'no',
            finished: ago(r.finished_at),
          })),
          ['id', 'label', 'cpu', 'disk', 'network', 'stability', 'total', 'verified', 'finished'],
        ),
      );
      return true;
    }
    default:
      return false;
  }
}

/** `tickets …`: SVC1-signed requests with a signing key. */
async function ticketCommand(name: string, arg: string | undefined, { o, clients, print }: Command): Promise<boolean> {
  switch (name) {
    case 'tickets list': {
      const tickets = await clients.signed().tickets();
      print(tickets, () => table(tickets, ['id', 'ref', 'status', 'subject']));
      return true;
    }
    case 'tickets open': {
      const ticket = await clients.signed().openTicket({
        product_id: positiveId(o.product, '--product'),
        subject: need(o.subject, '--subject'),
        message: need(o.message, '--message'),
      });
      print(ticket, () => `opened ${ticket.ref} (ticket ${ticket.id})`);
      return true;
    }
    case 'tickets reply': {
      const answer = await clients.signed().reply(positiveId(arg, 'ticket id'), need(o.message, '--message'));
      print(answer, () => 'reply sent');
      return true;
    }
    default:
      return false;
  }
}

/** The counts of a rollout's servers that are not zero, as `updated 3, offered 1`. */
const countsText = (counts: Record<string, number>) =>
  Object.entries(counts)
    .filter(([, n]) => n > 0)
    .map(([state, n]) => `${state} ${n}`)
    .join(', ') || 'no servers';

/** `agents update…`: agent updates in waves (docs/fleet.md, "Agent updates"), SVC1-signed. */
async function updateCommand(name: string, arg: string | undefined, { o, clients, print }: Command): Promise<boolean> {
  switch (name) {
    case 'agents update': {
      if (arg !== undefined) throw new UsageError(`agents update takes no argument (got ${arg}); --tag picks servers`);
      const timeout = o['health-timeout'];
      const rollout = await clients.signed().startAgentUpdate({
        ...(o.tag !== undefined ? { tag: o.tag } : {}),
        ...(o.waves !== undefined ? { waves: o.waves } : {}),
        ...(timeout !== undefined ? { health_timeout_s: positiveId(timeout, '--health-timeout') } : {}),
      });
      print(
        rollout,
        () =>
          `rollout ${rollout.id} to agent ${rollout.version} started: waves ${rollout.waves}, ${countsText(rollout.counts)}\n` +
          `follow it with: palisade agents update-status ${rollout.id}`,
      );
      return true;
    }
    case 'agents updates': {
      const list = await clients.signed().agentUpdates();
      print(list, () =>
        [
          list.served_version === null
            ? 'this console serves no agent packages'
            : `served agent version ${list.served_version} (${list.signed ? 'signed' : 'unsigned: agents refuse it'}), ${list.outdated} servers run another`,
          table(
            list.rollouts.map((r) => ({
              ...r,
              tag: r.tag ?? 'all',
              wave: `${r.current_wave + 1}/${r.wave_count}`,
              servers: countsText(r.counts),
              started: ago(r.created_at),
            })),
            ['id', 'version', 'tag', 'state', 'wave', 'servers', 'started'],
          ),
        ].join('\n'),
      );
      return true;
    }
    case 'agents update-status': {
      const detail = await clients.signed().agentUpdate(positiveId(arg, 'rollout id'));
      const r = detail.rollout;
      print(detail, () =>
        [
          `rollout ${r.id} to agent ${r.version}: ${r.state}, wave ${r.current_wave + 1} of ${r.wave_count} (${r.waves})` +
            (r.reason ? `: ${r.reason}` : ''),
          table(
            detail.servers.map((s) => ({
              ...s,
              id: s.server_id,
              wave: s.wave + 1,
              from: s.from_version,
              now: s.agent_version,
            })),
            ['id', 'name', 'wave', 'state', 'from', 'now', 'reason'],
          ),
        ].join('\n'),
      );
      return true;
    }
    case 'agents update-cancel': {
      const rollout = await clients.signed().cancelAgentUpdate(positiveId(arg, 'rollout id'));
      print(rollout, () => `rollout ${rollout.id} cancelled: ${countsText(rollout.counts)}`);
      return true;
    }
    default:
      return false;
  }
}

/** `agent …`: the agent's own API with its key. */
async function agentCommand(name: string, arg: string | undefined, { o, clients, print }: Command): Promise<boolean> {
  switch (name) {
    case 'agent health': {
      const health = await clients.agent().health();
      print(health, () => `${health.status}, version ${health.version}, up ${health.uptime_s} s`);
      return true;
    }
    case 'agent metrics': {
      const metrics = await clients.agent().metrics();
      print(metrics, () => JSON.stringify(metrics, null, 2));
      return true;
    }
    case 'agent control': {
      if (!arg || !isControlPath(arg)) {
        throw new UsageError(`control path: expected one of ${CONTROL_PATHS.join(', ')}`);
      }
      const method = (o.method ?? 'GET').toUpperCase();
      if (method !== 'GET' && method !== 'POST' && method !== 'DELETE')
        throw new UsageError('--method: GET, POST or DELETE');
      let body: unknown;
      if (o.data !== undefined) {
        try {
          body = JSON.parse(o.data);
        } catch {
          throw new UsageError('--data: expected JSON');
        }
      }
      const answer = await clients.agent().controlRaw(method, arg, body, o.ip ? { ip: o.ip } : undefined);
      print(answer, () => JSON.stringify(answer, null, 2));
      return true;
    }
    default:
      return false;
  }
}

/** The message on stderr and the exit code a script can tell apart. */
function failure(err: unknown): number {
  process.stderr.write(`palisade: ${(err as Error).message}\n`);
  if (err instanceof UsageError) return EXIT.usage;
  if (err instanceof TeamMismatch) return EXIT.notFound;
  if (err instanceof PalisadeError) {
    if (err.isAuth) return EXIT.auth;
    if (err.isNotFound) return EXIT.notFound;
    if (err.isRateLimited) return EXIT.rateLimited;
    return EXIT.failed;
  }
  if (err instanceof PalisadeNetworkError) return EXIT.unreachable;
  return EXIT.failed;
}

export async function main(argv: string[], env: NodeJS.ProcessEnv, out: (s: string) => void): Promise<number> {
  let parsed: ReturnType<typeof parseCommandLine>;
  try {
    parsed = parseCommandLine(argv);
  } catch (err) {
    process.stderr.write(`palisade: ${(err as Error).message}\n\n${HELP}\n`);
    return EXIT.usage;
  }
  const { values: o, positionals: args } = parsed;
  if (o.version) {
    out(VERSION);
    return EXIT.ok;
  }
  if (o.help || args.length === 0) {
    out(HELP);
    return o.help ? EXIT.ok : EXIT.usage;
  }
  let clients: ReturnType<typeof clientsOf> | undefined;
  try {
    clients = clientsOf(o, env);
    const command: Command = {
      o,
      clients,
      print: (value, human) => out(o.json ? JSON.stringify(value, null, 2) : human()),
    };
    const [first, sub, arg] = args;
    const name = `${first} ${sub ?? ''}`.trim();
    for (const run of [readCommand, ticketCommand, updateCommand, agentCommand])
      if (await run(name, arg, command)) return EXIT.ok;
    throw new UsageError(`unknown command: ${args.join(' ')}`);
  } catch (err) {
    return failure(await explained(err, clients));
  }
}

/**
 * A 404 while a team is named may be the console refusing a credential of another team (it answers
 * 404 as for any team one is not in): then say whose team the credential is in. Asked only after a
 * 404, so a command in the right team costs no extra request.
 */
async function explained(err: unknown, clients: ReturnType<typeof clientsOf> | undefined): Promise<unknown> {
  if (!(err instanceof PalisadeError && err.isNotFound) || !clients) return err;
  const other = await clients.otherTeam();
  if (!other) return err;
  return new TeamMismatch(
    `this ${other.what} belongs to team ${other.team.id} (${other.team.name}), not ${teamText(clients.team)}`,
  );
}

main(process.argv.slice(2), process.env, (s) => process.stdout.write(`${s}\n`)).then((code) => {
  process.exitCode = code;
});
