#!/usr/bin/env node
// Palisade vs fail2ban vs CrowdSec on one attack corpus (docs/performance.md, "Side by side").
// One machine, network namespaces: a "server" namespace running Debian's openssh-server and nginx,
// an attacker namespace (SSH password guessers, HTTP scanners, a connection flooder, each from its
// own address) and a benign namespace (clients logging in and loading pages throughout). Each
// protector in turn runs in the server namespace, in the foreground, with its config and state in a
// temp dir, reading the same sshd log and nginx access log; the same corpus runs against each.
// Root only; needs openssh-server nginx sshpass (and fail2ban, crowdsec, crowdsec-firewall-bouncer for
// those columns). Namespaces are pal-p-*; everything is removed at exit.
// Usage: node bench/protection-vs.mjs [--protectors palisade,palisade-noguard,fail2ban,crowdsec] [--seconds 60]
//        [--json] [--tag X]   (needs npm run build; e2e/protection-vs.test.ts runs a short one)
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import {
  appendFileSync,
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { arg, percentile, root } from './lib.mjs';

const ASKED = arg('protectors', null);
const PROTECTORS = (ASKED ?? 'palisade,palisade-noguard,fail2ban,crowdsec').split(',');
const SECONDS = Number(arg('seconds', '60'));
const JSON_OUT = process.argv.includes('--json');
const AGENT_CLI = join(root, 'packages/agent/dist/src/cli.js');
// `_`: scripts/bench.mjs (npm run bench) runs every bench/*.mjs but those.
const CLIENT = join(root, 'bench/_protection-vs-client.mjs');
const PASSWORD = 'bench-Correct-Horse-7';

const say = (s) => (JSON_OUT ? process.stderr : process.stdout).write(`${s}\n`);
// Under `npm run bench` (no --protectors) what cannot run here is skipped with the reason; asked
// for by name (as the test does), it is an error.
const skipOrFail = (why) => {
  if (ASKED) {
    console.error(`protection-vs: ${why}`);
    process.exit(2);
  }
  console.log(`protection-vs: skipped: ${why}`);
  process.exit(0);
};
if (process.getuid?.() !== 0) skipOrFail('needs root (network namespaces, nftables)');
for (const tool of ['/usr/sbin/sshd', '/usr/sbin/nginx', '/usr/bin/sshpass', '/usr/sbin/nft'])
  if (!existsSync(tool)) skipOrFail(`${tool} is missing (apt-get install openssh-server nginx sshpass nftables)`);
const NEEDS = {
  palisade: [AGENT_CLI],
  'palisade-noguard': [AGENT_CLI],
  fail2ban: ['/usr/bin/fail2ban-server'],
  crowdsec: ['/usr/bin/crowdsec', '/usr/bin/cscli', '/usr/bin/crowdsec-firewall-bouncer'],
};
for (const name of [...PROTECTORS]) {
  if (!NEEDS[name]) skipOrFail(`--protectors takes ${Object.keys(NEEDS).join(', ')}; not ${name}`);
  const missing = NEEDS[name].find((file) => !existsSync(file));
  if (!missing) continue;
  const why = `${name} needs ${missing} (${missing === AGENT_CLI ? 'npm run build' : 'apt-get install'})`;
  if (ASKED) skipOrFail(why);
  console.log(`protection-vs: ${why}: left out`);
  PROTECTORS.splice(PROTECTORS.indexOf(name), 1);
}

// ---- the corpus: who attacks how, from where ----
// Documentation ranges (TEST-NET-2, TEST-NET-3), not private ones: CrowdSec's shipped whitelists
// parser drops every event from 10/8, 172.16/12 and 192.168/16.
const SERVER_A = '198.51.100.1'; // the server's side towards the attackers
const SERVER_B = '203.0.113.1'; // and towards the benign clients
const attackers = [
  ...[11, 12, 13, 14].map((n) => ({ ip: `198.51.100.${n}`, role: 'ssh-guess' })),
  ...[21, 22, 23].map((n) => ({ ip: `198.51.100.${n}`, role: 'http-scan' })),
  { ip: '198.51.100.31', role: 'conn-flood' },
];
const benign = [11, 12, 13, 14].map((n) => ({ ip: `203.0.113.${n}`, role: 'benign' }));

// --tag keeps a test's namespaces apart from a bench run's.
const TAG = arg('tag', '');
const NS = { srv: `pal-p-srv${TAG}`, atk: `pal-p-atk${TAG}`, ben: `pal-p-ben${TAG}` };
const sh = (cmd, args, opts = {}) => execFileSync(cmd, args, { encoding: 'utf8', ...opts });
const inNs = (ns, cmd, args) => sh('ip', ['netns', 'exec', ns, cmd, ...args]);

const children = new Set();
let dir = null;
function removeNetwork() {
  for (const ns of Object.values(NS)) spawnSync('ip', ['netns', 'del', ns], { stdio: 'ignore' });
}
function cleanup() {
  // On an error the daemons' own children (nginx's worker, sshd's sessions) go with them.
  for (const c of children)
    if (c.exitCode === null && c.signalCode === null)
      for (const p of procTree(c.pid).reverse()) {
        try {
          process.kill(p, 'SIGKILL');
        } catch {}
      }
  removeNetwork();
  if (dir && !process.env.BENCH_KEEP) rmSync(dir, { recursive: true, force: true });
}
process.on('exit', cleanup);
for (const signal of ['SIGINT', 'SIGTERM'])
  process.on(signal, () => {
    cleanup();
    process.exit(130);
  });

function createNetwork() {
  removeNetwork();
  for (const ns of Object.values(NS)) {
    sh('ip', ['netns', 'add', ns]);
    inNs(ns, 'ip', ['link', 'set', 'lo', 'up']);
  }
  const pair = (side, ns, serverIp, clients) => {
    sh('ip', [
      'link',
      'add',
      `pal-p-s${side}`,
      'netns',
      NS.srv,
      'type',
      'veth',
      'peer',
      'name',
      `pal-p-c${side}`,
      'netns',
      ns,
    ]);
    inNs(NS.srv, 'ip', ['addr', 'add', `${serverIp}/24`, 'dev', `pal-p-s${side}`]);
    inNs(NS.srv, 'ip', ['link', 'set', `pal-p-s${side}`, 'up']);
    for (const c of clients) inNs(ns, 'ip', ['addr', 'add', `${c.ip}/24`, 'dev', `pal-p-c${side}`]);
    inNs(ns, 'ip', ['link', 'set', `pal-p-c${side}`, 'up']);
  };
  pair('a', NS.atk, SERVER_A, attackers);
  pair('b', NS.ben, SERVER_B, benign);
}

/** Appends each line a daemon writes to stderr to `file` as a syslog line (`Nov 28 17:01:02 srv name[pid]: …`). */
function syslogTo(child, name, file) {
  let rest = '';
  child.stderr.on('data', (d) => {
    const lines = (rest + d).split('\n');
    rest = lines.pop();
    const now = new Date();
    const stamp = `${now.toLocaleString('en-US', { month: 'short', timeZone: 'UTC' })} ${String(now.getUTCDate()).padStart(2, ' ')} ${now.toISOString().slice(11, 19)}`;
    const text = lines
      .filter(Boolean)
      .map((l) => `${stamp} srv ${name}[${child.pid}]: ${l}\n`)
      .join('');
    if (text) appendFileSync(file, text);
  });
}

function startChild(ns, command, args, opts = {}) {
  const child = spawn('ip', ['netns', 'exec', ns, command, ...args], { stdio: ['ignore', 'pipe', 'pipe'], ...opts });
  children.add(child);
  return child;
}

/** The server: sshd (a user palbench with a known password) and nginx, logs under `run`. palbench
 *  lives in a copy of /etc bind-mounted over /etc in sshd's own mount namespace. Not over the single
 *  files: a useradd or userdel elsewhere on the host (the install tests run beside this one) renames
 *  a new /etc/passwd into place, which detaches a bind mount made on the old file in every namespace,
 *  and sshd then refuses palbench's right password. */
async function startServer(run) {
  const keyFile = join(run, 'ssh_host_ed25519_key');
  sh('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', keyFile]);
  const hash = sh('openssl', ['passwd', '-6', PASSWORD]).trim();
  const etc = join(run, 'etc');
  sh('cp', ['-a', '/etc', etc]);
  appendFileSync(join(etc, 'passwd'), 'palbench:x:4999:4999::/tmp:/bin/sh\n');
  appendFileSync(join(etc, 'shadow'), `palbench:${hash}:19000:0:99999:7:::\n`);
  appendFileSync(join(etc, 'group'), 'palbench:x:4999:\n');
  const authLog = join(run, 'auth.log');
  const accessLog = join(run, 'access.log');
  writeFileSync(authLog, '');
  writeFileSync(accessLog, '');
  const mounts = `mount --bind ${etc} /etc`;
  const sshd = startChild(NS.srv, 'sh', [
    '-c',
    `mount -t tmpfs none /run && mkdir -m 755 /run/sshd && ${mounts} && exec /usr/sbin/sshd -D -e -f /dev/null -h ${keyFile} -o UsePAM=no -o PasswordAuthentication=yes -o KbdInteractiveAuthentication=no -o MaxStartups=100:30:200 -o MaxAuthTries=6`,
  ]);
  syslogTo(sshd, 'sshd', authLog);
  mkdirSync(join(run, 'www'));
  for (const d of [dir, run]) chmodSync(d, 0o755); // nginx's workers (nobody) read the page
  writeFileSync(join(run, 'www/index.html'), '<h1>bench</h1>\n');
  writeFileSync(
    join(run, 'nginx.conf'),
    `worker_processes 1;\npid ${run}/nginx.pid;\nerror_log ${run}/nginx-error.log;\nevents { worker_connections 1024; }\nhttp {\n  access_log ${accessLog} combined;\n  client_body_temp_path ${run}/nginx-tmp;\n  server { listen 80; root ${run}/www; }\n}\n`,
  );
  const nginx = startChild(NS.srv, '/usr/sbin/nginx', ['-c', join(run, 'nginx.conf'), '-p', run, '-g', 'daemon off;']);
  for (let i = 0; i < 100; i++) {
    const listening = inNs(NS.srv, 'ss', ['-Htln']);
    if (/:22\s/.test(listening) && /:80\s/.test(listening)) return { sshd, nginx, authLog, accessLog };
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('sshd or nginx did not start');
}

// ---- the protectors: each returns {pids(), stop()} once it watches the logs and enforces ----

/** The agent as shipped, nftables backend; `extra`: config lines (palisade-noguard: no SSH-peer guard). */
async function palisade(run, logs, extra = '') {
  const config = join(run, 'agent.conf');
  const state = join(run, 'agent-state');
  writeFileSync(config, `metrics.listen = 127.0.0.1:9100\nprotection.backend = nftables\n${extra}`);
  const made = sh(process.execPath, [AGENT_CLI, 'key', '--state-dir', state, '--config', config]);
  const key = /agk_[0-9A-Za-z]+/.exec(made)?.[0];
  // BENCH_NODE_ARGS (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`) goes to the agent's node, as in bench/lib.mjs.
  const nodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const agent = startChild(NS.srv, process.execPath, [
    ...nodeArgs,
    AGENT_CLI,
    'run',
    '--config',
    config,
    '--state-dir',
    state,
  ]);
  let out = '';
  agent.stdout.on('data', (d) => {
    out += d;
  });
  agent.stderr.on('data', (d) => {
    out += d;
  });
  for (let i = 0; !out.includes('listening on'); i++) {
    if (i > 200 || agent.exitCode !== null) throw new Error(`the agent did not start: ${out}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  // The shipped patterns, pointed at this run's files (docs/protection.md, "Log patterns").
  for (const [name, file] of [
    ['sshd', logs.authLog],
    ['http-scan', logs.accessLog],
  ]) {
    const answer = inNs(NS.srv, 'curl', [
      '-s',
      '-w',
      ' %{http_code}',
      '-H',
      `authorization: Bearer ${key}`,
      '-H',
      'content-type: application/json',
      '-d',
      JSON.stringify({ name, file }),
      'http://127.0.0.1:9100/block-pattern',
    ]);
    if (!/ 20\d$/.test(answer)) throw new Error(`block-pattern ${name}: ${answer}`);
  }
  return { pids: () => [agent.pid], child: agent, output: () => out };
}

async function fail2ban(run, logs) {
  const conf = join(run, 'fail2ban');
  cpSync('/etc/fail2ban', conf, { recursive: true });
  rmSync(join(conf, 'jail.d'), { recursive: true, force: true }); // Debian's sets the systemd backend
  mkdirSync(join(conf, 'jail.d'));
  writeFileSync(
    join(conf, 'fail2ban.local'),
    `[Definition]\nlogtarget = ${run}/fail2ban.log\nsocket = ${run}/fail2ban.sock\npidfile = ${run}/fail2ban.pid\ndbfile = ${run}/fail2ban.sqlite3\n`,
  );
  // Debian's jail.conf defaults (maxretry 5, findtime 10m, bantime 10m), polling the files; the
  // allports action so a ban drops every port, as the other two do.
  writeFileSync(
    join(conf, 'jail.local'),
    `[DEFAULT]\nbackend = polling\nbanaction = nftables-allports\nbanaction_allports = nftables-allports\n\n[sshd]\nenabled = true\nlogpath = ${logs.authLog}\n\n[nginx-botsearch]\nenabled = true\nlogpath = ${logs.accessLog}\n`,
  );
  const server = startChild(NS.srv, '/usr/bin/fail2ban-server', [
    '-f',
    '-x',
    '-c',
    conf,
    '-s',
    join(run, 'fail2ban.sock'),
    '-p',
    join(run, 'fail2ban.pid'),
  ]);
  let out = '';
  server.stdout.on('data', (d) => {
    out += d;
  });
  server.stderr.on('data', (d) => {
    out += d;
  });
  for (let i = 0; ; i++) {
    const status = spawnSync('fail2ban-client', ['-c', conf, '-s', join(run, 'fail2ban.sock'), 'status'], {
      encoding: 'utf8',
    });
    if (/Number of jail:\s+2/.test(status.stdout)) break;
    if (i > 300 || server.exitCode !== null) throw new Error(`fail2ban did not start: ${out}${status.stdout}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return { pids: () => [server.pid], child: server, output: () => out };
}

// CrowdSec offline, as Debian sets it up without the network: the hub Debian ships
// (/usr/share/crowdsec/hub) with the items its postinst enables (the sshd, nginx, linux and
// base-http-scenarios collections and their parsers and scenarios, and the whitelists parser), no
// Central API; the local API on loopback, and crowdsec-firewall-bouncer in nftables mode with
// Debian's settings (update_frequency 10s, DROP). The lists below are Debian's postinst UPSTREAM_ITEMS.
const CROWDSEC_ITEMS = [
  'collections/crowdsecurity/base-http-scenarios.yaml',
  'collections/crowdsecurity/http-cve.yaml',
  'collections/crowdsecurity/linux.yaml',
  'collections/crowdsecurity/nginx.yaml',
  'collections/crowdsecurity/sshd.yaml',
  'parsers/s00-raw/crowdsecurity/syslog-logs.yaml',
  'parsers/s01-parse/crowdsecurity/nginx-logs.yaml',
  'parsers/s01-parse/crowdsecurity/sshd-logs.yaml',
  'parsers/s02-enrich/crowdsecurity/dateparse-enrich.yaml',
  'parsers/s02-enrich/crowdsecurity/http-logs.yaml',
  'parsers/s02-enrich/crowdsecurity/whitelists.yaml',
];
const CROWDSEC_SCENARIOS = [
  'apache_log4j2_cve-2021-44228',
  'CVE-2022-26134',
  'CVE-2022-35914',
  'CVE-2022-37042',
  'CVE-2022-40684',
  'CVE-2022-41082',
  'CVE-2022-41697',
  'CVE-2022-42889',
  'CVE-2022-44877',
  'CVE-2022-46169',
  'f5-big-ip-cve-2020-5902',
  'fortinet-cve-2018-13379',
  'grafana-cve-2021-43798',
  'http-backdoors-attempts',
  'http-bad-user-agent',
  'http-crawl-non_statics',
  'http-cve-2021-41773',
  'http-cve-2021-42013',
  'http-generic-bf',
  'http-open-proxy',
  'http-path-traversal-probing',
  'http-probing',
  'http-sensitive-files',
  'http-sqli-probing',
  'http-xss-probing',
  'jira_cve-2021-26086',
  'nginx-req-limit-exceeded',
  'pulse-secure-sslvpn-cve-2019-11510',
  'spring4shell_cve-2022-22965',
  'ssh-bf',
  'ssh-slow-bf',
  'thinkphp-cve-2018-20062',
  'vmware-cve-2022-22954',
  'vmware-vcenter-vmsa-2021-0027',
]
  .map((s) => `crowdsecurity/${s}`)
  .concat('ltsich/http-w00tw00t');
async function crowdsec(run, logs) {
  const hub = '/usr/share/crowdsec/hub';
  const cs = join(run, 'crowdsec');
  for (const d of ['etc', 'hub', 'data', 'etc/acquis.d']) mkdirSync(join(cs, d), { recursive: true });
  for (const item of ['blockers', 'collections', 'parsers', 'postoverflows', 'scenarios', '.index.json'])
    symlinkSync(join(hub, item), join(cs, 'hub', item));
  for (const item of [...CROWDSEC_ITEMS, ...CROWDSEC_SCENARIOS.map((s) => `scenarios/${s}.yaml`)]) {
    // The code wants <type>/<stage>/<name>.yaml without the author's directory.
    const parts = item.split('/');
    const target = join(cs, 'etc', ...parts.slice(0, -2), parts.at(-1));
    mkdirSync(join(target, '..'), { recursive: true });
    if (existsSync(join(hub, item)) && !existsSync(target)) symlinkSync(join(hub, item), target);
  }
  for (const f of readdirSync('/usr/share/crowdsec/data'))
    cpSync(join('/usr/share/crowdsec/data', f), join(cs, 'data', f));
  cpSync('/etc/crowdsec/patterns', join(cs, 'etc/patterns'), { recursive: true });
  cpSync('/etc/crowdsec/profiles.yaml', join(cs, 'etc/profiles.yaml'));
  writeFileSync(join(cs, 'etc/simulation.yaml'), 'simulation: off\n');
  writeFileSync(join(cs, 'etc/local_api_credentials.yaml'), '');
  writeFileSync(
    join(cs, 'etc/acquis.yaml'),
    `filenames:\n  - ${logs.authLog}\nlabels:\n  type: syslog\n---\nfilenames:\n  - ${logs.accessLog}\nlabels:\n  type: nginx\n`,
  );
  const config = join(cs, 'etc/config.yaml');
  writeFileSync(
    config,
    `common:\n  daemonize: false\n  log_media: stdout\n  log_level: info\n  working_dir: ${cs}\nconfig_paths:\n  config_dir: ${cs}/etc/\n  data_dir: ${cs}/data/\n  simulation_path: ${cs}/etc/simulation.yaml\n  hub_dir: ${cs}/hub/\n  index_path: ${cs}/hub/.index.json\n  notification_dir: ${cs}/etc/notifications/\n  plugin_dir: /usr/lib/crowdsec/plugins/\ncrowdsec_service:\n  acquisition_path: ${cs}/etc/acquis.yaml\n  acquisition_dir: ${cs}/etc/acquis.d\n  parser_routines: 1\ncscli:\n  output: human\ndb_config:\n  log_level: info\n  type: sqlite\n  db_path: ${cs}/data/crowdsec.db\n  use_wal: true\napi:\n  client:\n    insecure_skip_verify: false\n    credentials_path: ${cs}/etc/local_api_credentials.yaml\n  server:\n    log_level: info\n    listen_uri: 127.0.0.1:8080\n    profiles_path: ${cs}/etc/profiles.yaml\n    trusted_ips:\n      - 127.0.0.1\nprometheus:\n  enabled: false\n`,
  );
  const cscli = (...args) => inNs(NS.srv, '/usr/bin/cscli', ['-c', config, '--error', ...args]);
  cscli('machines', 'add', 'bench', '--auto', '-f', join(cs, 'etc/local_api_credentials.yaml'), '--force');
  const bouncerKey = 'palisadebenchbouncerkey0123456789';
  cscli('bouncers', 'add', 'bench-firewall', '-k', bouncerKey);
  const engine = startChild(NS.srv, '/usr/bin/crowdsec', ['-c', config]);
  let out = '';
  for (const s of [engine.stdout, engine.stderr])
    s.on('data', (d) => {
      out += d;
    });
  for (let i = 0; !/Starting processing data|crowdsec init done|Starting .* API server/.test(out) || !apiUp(); i++) {
    if (i > 300 || engine.exitCode !== null) throw new Error(`crowdsec did not start: ${out}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  writeFileSync(
    join(cs, 'bouncer.yaml'),
    `mode: nftables\nupdate_frequency: 10s\ndaemonize: false\nlog_mode: stdout\nlog_level: info\napi_url: http://127.0.0.1:8080/\napi_key: ${bouncerKey}\ndisable_ipv6: false\ndeny_action: DROP\ndeny_log: false\nsupported_decisions_types:\n  - ban\nblacklists_ipv4: crowdsec-blacklists\nblacklists_ipv6: crowdsec6-blacklists\nnftables:\n  ipv4:\n    enabled: true\n    set-only: false\n    table: crowdsec\n    chain: crowdsec-chain\n  ipv6:\n    enabled: true\n    set-only: false\n    table: crowdsec6\n    chain: crowdsec6-chain\nprometheus:\n  enabled: false\n`,
  );
  const bouncer = startChild(NS.srv, '/usr/bin/crowdsec-firewall-bouncer', ['-c', join(cs, 'bouncer.yaml')]);
  for (const s of [bouncer.stdout, bouncer.stderr])
    s.on('data', (d) => {
      out += d;
    });
  for (
    let i = 0;
    !/crowdsec-chain/.test(
      spawnSync('ip', ['netns', 'exec', NS.srv, 'nft', 'list', 'ruleset'], { encoding: 'utf8' }).stdout,
    );
    i++
  ) {
    if (i > 300 || bouncer.exitCode !== null) throw new Error(`the bouncer did not start: ${out}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    pids: () => [engine.pid, bouncer.pid],
    child: engine,
    others: [bouncer],
    output: () => out,
  };
}
function apiUp() {
  return (
    spawnSync('ip', ['netns', 'exec', NS.srv, 'curl', '-s', '-o', '/dev/null', 'http://127.0.0.1:8080/health'], {})
      .status === 0
  );
}

// ---- measuring: CPU (including reaped children: nft runs) and peak RSS of the protector's tree ----

function procTree(pid) {
  const out = [pid];
  for (let i = 0; i < out.length; i++) {
    try {
      for (const c of readFileSync(`/proc/${out[i]}/task/${out[i]}/children`, 'utf8').trim().split(/\s+/))
        if (c) out.push(Number(c));
    } catch {}
  }
  return out;
}
function parentOf(pid) {
  try {
    return Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')[1]);
  } catch {
    return 0;
  }
}
function cpuOf(pid) {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) / 100; // utime stime cutime cstime
  } catch {
    return 0;
  }
}
function rssOf(pid) {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
  } catch {
    return 0;
  }
}
/**
 * The protector's processes (below `ip netns exec`, which execs the command, so the pid is the
 * daemon's): the roots' CPU including the children they reaped (`nft` runs), plus descendants still
 * alive at the end (a reaped one is already in its parent's figure); peak RSS of the whole tree.
 */
function sampler(rootPids) {
  let peakRss = 0;
  const start = new Map();
  const last = new Map();
  const tick = () => {
    let rss = 0;
    last.clear();
    for (const r of rootPids())
      for (const p of procTree(r)) {
        rss += rssOf(p);
        last.set(p, cpuOf(p));
        if (!start.has(p)) start.set(p, r === p || starting ? last.get(p) : 0);
      }
    peakRss = Math.max(peakRss, rss);
  };
  let starting = true;
  tick();
  starting = false;
  const timer = setInterval(tick, 250);
  return {
    stop() {
      tick();
      clearInterval(timer);
      let total = 0;
      for (const [p, s] of last) total += s - (start.get(p) ?? 0);
      return { cpuS: total, rssMiB: peakRss };
    },
  };
}

function runClients(ns, clients) {
  const spec = JSON.stringify({
    server: ns === NS.atk ? SERVER_A : SERVER_B,
    seconds: SECONDS,
    password: PASSWORD,
    clients,
  });
  const child = startChild(ns, process.execPath, [CLIENT, spec]);
  let out = '';
  child.stdout.on('data', (d) => {
    out += d;
  });
  return new Promise((resolve, reject) =>
    child.on('exit', (code) =>
      code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`clients exited ${code}: ${out}`)),
    ),
  );
}

async function runOne(name) {
  const run = mkdtempSync(join(dir, `${name}-`));
  createNetwork();
  const server = await startServer(run);
  const setup = {
    palisade,
    // The SSH-peer guard off: an attacker's own open ssh connection no longer shields it (docs/performance.md).
    'palisade-noguard': (r, l) => palisade(r, l, 'protection.ssh_ports =\n'),
    fail2ban,
    crowdsec,
  }[name];
  const protector = await setup(run, server);
  const measure = sampler(protector.pids);
  const [atk, ben] = await Promise.all([runClients(NS.atk, attackers), runClients(NS.ben, benign)]);
  const usage = measure.stop();
  if (process.env.BENCH_KEEP) writeFileSync(join(run, 'protector.out'), protector.output());
  const daemons = [protector.child, ...(protector.others ?? []), server.sshd, server.nginx];
  // sshd's per-connection processes (guessers cut off mid-login) would outlive the listener until
  // LoginGraceTime: the deepest go first, each while its parent is there to reap it.
  const gone = (p) => {
    try {
      return /State:\s+Z/.test(readFileSync(`/proc/${p}/status`, 'utf8'));
    } catch {
      return true;
    }
  };
  const tree = procTree(server.sshd.pid);
  const depth = (p) => (p === server.sshd.pid ? 0 : p <= 1 ? 99 : 1 + depth(parentOf(p)));
  for (const level of [2, 1]) {
    const these = tree.filter((p) => p !== server.sshd.pid && depth(p) === level);
    for (const p of these) {
      try {
        process.kill(p, 'SIGTERM');
      } catch {}
    }
    for (let i = 0; i < 40 && !these.every(gone); i++) await new Promise((r) => setTimeout(r, 50));
  }
  for (const c of daemons) c.kill('SIGTERM');
  await Promise.all(daemons.map((c) => (c.exitCode === null ? new Promise((r) => c.once('exit', r)) : null)));
  removeNetwork();
  // What reached the service, counted where it arrived: sshd's failed passwords and nginx's access
  // log lines per address; the flood's connections as its client counted them (nginx logs none).
  const authLines = readFileSync(server.authLog, 'utf8');
  const accessLines = readFileSync(server.accessLog, 'utf8').split('\n');
  for (const c of atk.clients) {
    if (c.role === 'ssh-guess')
      c.answered = authLines.split(`Failed password for `).filter((l) => l.includes(` from ${c.ip} port `)).length;
    if (c.role === 'http-scan') c.answered = accessLines.filter((l) => l.startsWith(`${c.ip} `)).length;
  }
  const banned = atk.clients.filter((c) => c.firstDrop !== null);
  const delays = banned.map((c) => c.firstDrop - c.firstAttempt).sort((a, b) => a - b);
  return {
    protector: name,
    seconds: SECONDS,
    attackers: atk.clients.map((c) => ({
      ip: c.ip,
      role: c.role,
      banned_after_ms: c.firstDrop === null ? null : c.firstDrop - c.firstAttempt,
      answered: c.answered,
    })),
    median_ms: percentile(delays, 50),
    p95_ms: percentile(delays, 95),
    attempts_through: atk.clients.reduce((s, c) => s + c.answered, 0),
    ssh_guesses_through: atk.clients.filter((c) => c.role === 'ssh-guess').reduce((s, c) => s + c.answered, 0),
    scans_through: atk.clients.filter((c) => c.role === 'http-scan').reduce((s, c) => s + c.answered, 0),
    never_banned: atk.clients.filter((c) => c.firstDrop === null).map((c) => `${c.ip} (${c.role})`),
    benign_blocked: ben.clients.filter((c) => c.failures.length > 0).map((c) => ({ ip: c.ip, failures: c.failures })),
    benign_answered: ben.clients.reduce((s, c) => s + c.answered, 0),
    cpu_s: usage.cpuS,
    rss_mib: usage.rssMiB,
  };
}

function versions() {
  const dpkg = (p) =>
    // biome-ignore lint/suspicious/noTemplateCurlyInString: dpkg-query's own format, not a template
    spawnSync('dpkg-query', ['-W', '-f', '${Version}', p], { encoding: 'utf8' }).stdout || 'not installed';
  return Object.fromEntries(
    ['openssh-server', 'nginx', 'fail2ban', 'crowdsec', 'crowdsec-firewall-bouncer', 'sshpass', 'nftables'].map((p) => [
      p,
      dpkg(p),
    ]),
  );
}

dir = mkdtempSync(join(tmpdir(), 'palisade-bench-vs-'));
const results = [];
for (const name of PROTECTORS) {
  say(`${name}: ${SECONDS} s of the corpus (${attackers.length} attackers, ${benign.length} benign clients)…`);
  results.push(await runOne(name));
}
if (JSON_OUT) process.stdout.write(`${JSON.stringify({ versions: versions(), results })}\n`);
else {
  const v = versions();
  say(
    `\nversions: ${Object.entries(v)
      .map(([k, x]) => `${k} ${x}`)
      .join(', ')}, node ${process.version}`,
  );
  const ms = (n) => (Number.isFinite(n) ? `${(n / 1000).toFixed(2)} s` : 'n/a');
  say(
    '\n| protector | time to ban, median / p95 | attempts through (ssh / scan / flood conns) | never banned | benign blocked | CPU s | peak RSS |',
  );
  say('| --- | --- | --- | --- | --- | --- | --- |');
  for (const r of results) {
    const flood = r.attempts_through - r.ssh_guesses_through - r.scans_through;
    say(
      `| ${r.protector} | ${ms(r.median_ms)} / ${ms(r.p95_ms)} | ${r.ssh_guesses_through} / ${r.scans_through} / ${flood} | ${r.never_banned.length ? r.never_banned.join(', ') : 0} | ${r.benign_blocked.length} | ${r.cpu_s.toFixed(2)} | ${r.rss_mib.toFixed(0)} MiB |`,
    );
  }
  for (const r of results) {
    say(
      `\n${r.protector}: ${r.attackers.map((a) => `${a.ip} ${a.role} ${a.banned_after_ms ?? 'never'} ms/${a.answered}`).join('; ')}`,
    );
    for (const b of r.benign_blocked) say(`  benign ${b.ip} blocked: ${b.failures.join('; ')}`);
  }
}
process.exit(0);
