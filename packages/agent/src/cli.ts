#!/usr/bin/env node
import { setFlagsFromString } from 'node:v8';
import type { RegistrationConnect } from '@palisade/protocol/enrolment';
import { Command, InvalidArgumentError, Option } from 'commander';
import {
  alertTestCommand,
  CliError,
  type ConfigChoice,
  enrollCommand,
  infoCommand,
  keyCommand,
  reloadCommand,
} from './cli/commands.js';
import { ConfigError, DEFAULT_CONFIG_FILE } from './config/config.js';
import { startDaemon } from './daemon.js';
import { realDeps } from './deps.js';
import { redactSecrets, streamLog } from './log.js';
import { DEFAULT_STATE_DIR } from './state/state-dir.js';
import { AGENT_VERSION } from './version.js';

const print = (line: string) => process.stdout.write(`${line}\n`);

function fail(err: unknown): never {
  if (err instanceof ConfigError) process.stderr.write(`palisade-agent: bad config:\n${redactSecrets(err.message)}\n`);
  else process.stderr.write(`palisade-agent: ${redactSecrets((err as Error).message ?? String(err))}\n`);
  process.exit(err instanceof CliError ? err.exitCode : 1);
}

interface CommonOptions {
  config?: string;
  stateDir: string;
}

const configChoice = (o: CommonOptions): ConfigChoice => ({
  file: o.config ?? DEFAULT_CONFIG_FILE,
  explicit: o.config !== undefined,
});

function positiveInt(raw: string): number {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 10_000)
    throw new InvalidArgumentError('expected a whole number from 1 to 10000');
  return n;
}

function connectMode(raw: string): RegistrationConnect {
  if (raw !== 'direct' && raw !== 'outbound' && raw !== 'auto')
    throw new InvalidArgumentError('expected direct, outbound or auto');
  return raw;
}

const program = new Command('palisade-agent')
  .description('Palisade agent: measures this server, serves /health and /metrics, sends alerts and checks in')
  .version(AGENT_VERSION)
  .showHelpAfterError()
  .configureOutput({ writeErr: (s) => process.stderr.write(s) });

const withConfig = (c: Command) =>
  c
    .option('-c, --config <file>', `config file of dotted keys (default ${DEFAULT_CONFIG_FILE})`)
    .option('-s, --state-dir <dir>', 'state directory (key hash, enrolment, TLS)', DEFAULT_STATE_DIR);

const runCommand = program
  .command('run')
  .description('run the daemon')
  .option(
    '--release-key-file <file>',
    'the release public key updates from the console must be signed with (default /etc/palisade/release.pub)',
  )
  // For tests: logs and the services found are looked up under this directory instead of / (a fixture tree).
  .addOption(new Option('--host-root <dir>').hideHelp());
withConfig(runCommand).action(async (o: CommonOptions & { releaseKeyFile?: string; hostRoot?: string }) => {
  // V8 grows the young generation from 1 MB to 16 MB a half as allocation goes on; the daemon
  // allocates little and keeps less, so it stays at 1 MB: about 2 MB less resident, measured in
  // docs/performance.md ("Agent memory"). Set here, not as a node flag, so every form gets it.
  setFlagsFromString('--semi-space-growth-factor=1');
  const log = streamLog();
  // Taken before the daemon says it listens (and writes its pid file): a SIGHUP from then on must
  // reload, never end the process as a signal without a handler does. One that comes while the
  // daemon starts is applied once it has started.
  let started: { reload(): unknown } | null = null;
  let reloadAsked = false;
  process.on('SIGHUP', () => {
    if (started) started.reload();
    else reloadAsked = true;
  });
  const daemon = await startDaemon({
    configFile: configChoice(o).file,
    configExplicit: configChoice(o).explicit,
    stateDir: o.stateDir,
    ...(o.releaseKeyFile ? { releaseKeyFile: o.releaseKeyFile } : {}),
    ...(o.hostRoot ? { hostRoot: o.hostRoot } : {}),
    deps: realDeps(),
    log,
    // The daemon's output goes to its log file or the journal: no secret in it (docs/security.md).
    print: (line) => print(redactSecrets(line)),
  }).catch(fail);
  started = daemon;
  if (reloadAsked) daemon.reload();
  let closing = false;
  const stop = (signal: string) => {
    if (closing) return;
    closing = true;
    log('info', `${signal}: shutting down`);
    daemon.close().then(
      () => process.exit(0),
      (err) => fail(err),
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
});

withConfig(
  program.command('key').description('print the metrics address and a new key (rotates: the old key stops working)'),
).action((o: CommonOptions) => keyCommand({ deps: realDeps(), print }, o.stateDir, configChoice(o)).catch(fail));

withConfig(program.command('info').description('show config, key, enrolment, daemon and measurement status'))
  .option('--json', 'print as JSON')
  .action((o: CommonOptions & { json?: boolean }) =>
    infoCommand({ deps: realDeps(), print }, o.stateDir, configChoice(o), o.json === true).catch(fail),
  );

program
  .command('reload')
  .description('make the running daemon re-read its config file (same as SIGHUP)')
  .option('-s, --state-dir <dir>', 'state directory of the running daemon', DEFAULT_STATE_DIR)
  .action((o: CommonOptions) => reloadCommand({ deps: realDeps(), print }, o.stateDir).catch(fail));

program
  .command('enroll')
  .description('enrol with a console by hand (what the console does through POST /enroll)')
  .requiredOption('--console <url>', 'the console address, e.g. https://console.example.com')
  .requiredOption('--token <token>', 'the daemon token the console gave (dmn_…)')
  .option('-s, --state-dir <dir>', 'state directory', DEFAULT_STATE_DIR)
  .action((o: CommonOptions & { console: string; token: string }) =>
    enrollCommand({ deps: realDeps(), print }, o.stateDir, o.console, o.token).catch(fail),
  );

withConfig(
  program
    .command('register')
    .description('add this server to a console with an enrolment token (what the one-line install runs)'),
)
  .requiredOption('--console <url>', 'the console address, e.g. https://console.example.com')
  .requiredOption('--token <token>', 'the enrolment token from Add server in the console (enr_…)')
  .option('--name <name>', 'the server name in the console (default: the hostname)')
  .option(
    '--url <url>',
    'the address the console reaches this agent at (default: the address it sees this request from)',
  )
  .option('--force', 'register again as a new server even when already enrolled')
  .option(
    '--connect <mode>',
    'direct (the console calls this agent), outbound (this agent keeps a link to the console), or auto ' +
      '(outbound when the console cannot reach this agent); default: console.connect of the config',
    connectMode,
  )
  .option('--wait <seconds>', 'how long to wait for the daemon to answer', positiveInt, 30)
  .action(
    async (
      o: CommonOptions & {
        console: string;
        token: string;
        name?: string;
        url?: string;
        force?: boolean;
        connect?: RegistrationConnect;
        wait: number;
      },
    ) => {
      const { registerCommand } = await import('./cli/register.js');
      await registerCommand({ deps: realDeps(), print }, o.stateDir, configChoice(o), {
        console: o.console,
        token: o.token,
        name: o.name,
        url: o.url,
        force: o.force === true,
        ...(o.connect ? { connect: o.connect } : {}),
        waitMs: o.wait * 1000,
      }).catch(fail);
    },
  );

program
  .command('uninstall')
  .description('stop and remove the agent (the package, or the single executable), its firewall table and unit')
  .option('--purge', 'also remove the config, the state (key, enrolment, lists) and the log')
  .option('--forget', 'first remove this server from the console it is registered with')
  .option('-s, --state-dir <dir>', 'state directory', DEFAULT_STATE_DIR)
  .action(async (o: { stateDir: string; purge?: boolean; forget?: boolean }) => {
    const { uninstallCommand } = await import('./cli/uninstall.js');
    await uninstallCommand({ deps: realDeps(), print }, o.stateDir, {
      purge: o.purge === true,
      forget: o.forget === true,
    }).catch(fail);
  });

program
  .command('verify-release')
  .description("check SHA256SUMS's signature against the pinned release key (exit 0 verified, 1 refused)")
  .requiredOption('--sums <file>', 'SHA256SUMS as downloaded')
  .requiredOption('--sig <file>', 'SHA256SUMS.sig as downloaded')
  .option('--key <base64>', 'the release public key (default: the pinned one in --key-file)')
  .option('--key-file <file>', 'the pinned release public key', '/etc/palisade/release.pub')
  .action(async (o: { sums: string; sig: string; key?: string; keyFile: string }) => {
    const { verifyReleaseFiles } = await import('./release.js');
    let ok = false;
    try {
      ok = verifyReleaseFiles(o);
    } catch (err) {
      fail(err);
    }
    if (!ok) fail(new Error(`${o.sig} is not the release key's signature of ${o.sums}: refused`));
    print(`${o.sums}: signature verified`);
  });

program
  .command('apply-update')
  .description('as root: apply the update the agent requested in <state-dir>/update/ (the systemd path unit runs it)')
  .option('-s, --state-dir <dir>', 'state directory of the agent', DEFAULT_STATE_DIR)
  .option('--bin <path>', 'the executable to replace (default: this one)')
  .option('--release-key-file <file>', 'the release key root pinned', '/etc/palisade/release.pub')
  .option('--systemd-unit <unit>', 'the unit to restart', 'palisade-agent.service')
  .action(async (o: { stateDir: string; bin?: string; releaseKeyFile: string; systemdUnit: string }) => {
    const { applyUpdateCommand } = await import('./cli/update.js');
    await applyUpdateCommand(o).catch(fail);
  });

program
  .command('supervise')
  .description('as root, without systemd: run the agent as its child, restart it when it stops, apply its updates')
  .option('-c, --config <file>', `config file (default ${DEFAULT_CONFIG_FILE})`, DEFAULT_CONFIG_FILE)
  .option('-s, --state-dir <dir>', 'state directory', DEFAULT_STATE_DIR)
  .option('--user <name>', 'run the agent as this user (when it exists; root: as is)', 'palisade-agent')
  .option('--bin <path>', 'the agent executable (default: this one)')
  .option('--release-key-file <file>', 'the release key root pinned (default /etc/palisade/release.pub)')
  .action(async (o: { config: string; stateDir: string; user: string; bin?: string; releaseKeyFile?: string }) => {
    const { superviseCommand } = await import('./cli/update.js');
    await superviseCommand(o).catch(fail);
    process.exit(0);
  });

withConfig(
  program.command('alert-test').description('send a test event to alerter.url (through the daemon when it runs)'),
)
  .option('--count <n>', 'number of test events (through the daemon)', positiveInt, 1)
  .action((o: CommonOptions & { count: number }) =>
    alertTestCommand({ deps: realDeps(), print }, o.stateDir, configChoice(o), o.count).catch(fail),
  );

withConfig(
  program
    .command('bench')
    .description('run the benchmark suite here, without a console (cpu, disk, stability), and print the scores'),
)
  .option('--quick', 'a short run: at most 10 s and 64 MB of disk')
  .option('--json', 'print {report, scores} as JSON')
  .action(async (o: CommonOptions & { quick?: boolean; json?: boolean }) => {
    // Loaded on demand, so the daemon's process never carries the suite.
    const { benchCommand } = await import('./cli/bench.js');
    const progress = (line: string) => process.stderr.write(`${line}\n`);
    await benchCommand({ deps: realDeps(), print, progress }, o.stateDir, configChoice(o), {
      quick: o.quick === true,
      json: o.json === true,
    }).catch(fail);
  });

program.parseAsync(process.argv).catch(fail);
