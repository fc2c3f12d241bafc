#!/usr/bin/env node
// The clients of bench/protection-vs.mjs, run inside an attacker or benign namespace
// (`ip netns exec NS node protection-vs-client.mjs SPEC_JSON`). SPEC: {server, seconds, clients:
// [{ip, role}]}; roles: ssh-guess (one wrong password per ssh connection, back to back, through
// sshpass), http-scan (24 probes for wp-login/.env/.git/phpMyAdmin and the like, one every 200 ms), conn-flood (holds
// 150 connections to port 80, reopening closed ones), benign (a correct ssh login every 4 s with one
// mistyped password in the run, a page load every 500 ms). Every client also probes: a TCP connect to
// port 80 every 100 ms (500 ms timeout); the first of two probes in a row that fail is the first
// dropped packet.
// Prints one JSON line: per client, first attempt, first failed probe, attempts answered, failures.
import { spawn } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';

const spec = JSON.parse(process.argv[2]);
const { server, seconds } = spec;
const started = Date.now();
const endAt = started + seconds * 1000;
const live = () => Date.now() < endAt;
const pause = (ms) => new Promise((r) => setTimeout(r, ms));

// 24 distinct probes, as scanners send them (each path once per round): fail2ban's botsearch filter,
// CrowdSec's http-probing (distinct 404 paths) and http-sensitive-files (distinct sensitive
// files) and Palisade's http-scan pattern each match their own subset.
const SCAN_PATHS = [
  '/wp-login.php',
  '/.env',
  '/.git/config',
  '/phpmyadmin/index.php',
  '/wp-admin/setup-config.php',
  '/xmlrpc.php',
  '/phpMyAdmin/',
  '/.git/HEAD',
  '/cgi-bin/test.cgi',
  '/vendor/phpunit/phpunit/src/Util/PHP/eval-stdin.php',
  '/.env.backup',
  '/.env.local',
  '/.htpasswd',
  '/backup.sql',
  '/.bash_history',
  '/pma/index.php',
  '/myadmin/',
  '/wp-signup.php',
  '/mysqladmin/',
  '/.env.production.local',
  '/cgi-bin/luci',
  '/roundcube/',
  '/.aws/credentials',
  '/webmail/',
];

function connectOnce(ip, port, timeoutMs) {
  return new Promise((resolve) => {
    const s = net.connect({ host: server, port, localAddress: ip });
    const timer = setTimeout(() => {
      s.destroy();
      resolve('timeout');
    }, timeoutMs);
    s.on('connect', () => {
      clearTimeout(timer);
      s.destroy();
      resolve(null);
    });
    s.on('error', (e) => {
      clearTimeout(timer);
      resolve(e.code ?? e.message);
    });
  });
}

function httpGet(ip, path) {
  return new Promise((resolve) => {
    const req = http.get({ host: server, port: 80, path, localAddress: ip, agent: false, timeout: 2000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve(0));
  });
}

/** One ssh login from `ip`: resolves with 0 (logged in), 5 (password refused) or another exit code (no answer). */
function sshLogin(ip, user, password) {
  return new Promise((resolve) => {
    const child = spawn(
      'sshpass',
      [
        '-p',
        password,
        'ssh',
        '-o',
        `BindAddress=${ip}`,
        '-o',
        'StrictHostKeyChecking=no',
        '-o',
        'UserKnownHostsFile=/dev/null',
        '-o',
        'LogLevel=error',
        '-o',
        'ConnectTimeout=3',
        '-o',
        'NumberOfPasswordPrompts=1',
        '-o',
        'PreferredAuthentications=password',
        '-o',
        'PubkeyAuthentication=no',
        `${user}@${server}`,
        'true',
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let err = '';
    child.stderr.on('data', (d) => {
      err += d;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 8000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve(code !== 0 && err.includes('Permission denied') ? 5 : (code ?? 255));
    });
  });
}

/**
 * A dropped packet is a probe that failed followed by another that failed: one probe alone can time
 * out on a loaded machine when this process's event loop stalls past the timeout (the timer runs
 * before the connection's event), which a ban never explains away. The drop is dated at the first.
 */
async function probe(c) {
  let pending = null;
  while (live()) {
    const at = Date.now();
    const error = await connectOnce(c.ip, 80, 500);
    if (error && pending) {
      if (c.firstDrop === null) c.firstDrop = pending.at;
      c.failures.push(`probe ${pending.error} at +${pending.at - started} ms`);
      pending = { at, error };
    } else if (error) pending = { at, error };
    else pending = null;
    await pause(100);
  }
}

async function sshGuess(c) {
  for (let i = 0; live(); i++) {
    const at = Date.now();
    c.firstAttempt ??= at;
    const code = await sshLogin(c.ip, i % 3 === 0 ? 'root' : `admin${i % 7}`, `guess-${i}`);
    if (code === 5) c.answered++;
    else if (code !== 0) await pause(200); // blocked: keep trying, as a real guesser would, but slower
  }
}

async function httpScan(c) {
  for (let i = 0; live(); i++) {
    const at = Date.now();
    c.firstAttempt ??= at;
    if ((await httpGet(c.ip, SCAN_PATHS[i % SCAN_PATHS.length])) !== 0) c.answered++;
    await pause(200);
  }
}

async function connFlood(c) {
  c.firstAttempt = Date.now();
  const one = async () => {
    while (live()) {
      await new Promise((resolve) => {
        const s = net.connect({ host: server, port: 80, localAddress: c.ip });
        s.setTimeout(2000);
        s.on('connect', () => {
          c.answered++;
          s.setTimeout(0);
          setTimeout(() => s.destroy(), Math.max(0, endAt - Date.now()));
        });
        s.on('timeout', () => s.destroy());
        s.on('error', () => {});
        s.on('close', resolve);
      });
      await pause(200);
    }
  };
  await Promise.all(Array.from({ length: 150 }, one));
}

async function benign(c, index) {
  const logins = async () => {
    for (let i = 0; live(); i++) {
      // One mistyped password in the run (as people do), then the right one.
      const typo = i === 1 + (index % 3);
      const code = await sshLogin(c.ip, 'palbench', typo ? 'typo-pass' : spec.password);
      if (code === 0) c.answered++;
      else if (!(typo && code === 5)) c.failures.push(`ssh login exit ${code} at +${Date.now() - started} ms`);
      await pause(typo ? 0 : 4000);
    }
  };
  const pages = async () => {
    while (live()) {
      const status = await httpGet(c.ip, '/');
      if (status === 200) c.answered++;
      else c.failures.push(`GET / answered ${status} at +${Date.now() - started} ms`);
      await pause(500);
    }
  };
  await Promise.all([logins(), pages()]);
}

const roles = { 'ssh-guess': sshGuess, 'http-scan': httpScan, 'conn-flood': connFlood, benign };
const clients = spec.clients.map((c) => ({ ...c, firstAttempt: null, firstDrop: null, answered: 0, failures: [] }));
// Benign clients start with the attackers; attackers start after the first second so the protector
// has seen normal traffic first.
await Promise.all(
  clients.map(async (c, i) => {
    if (c.role !== 'benign') await pause(1000);
    await Promise.all([probe(c), roles[c.role](c, i)]);
  }),
);
for (const c of clients) c.failures = c.failures.slice(0, 5);
process.stdout.write(`${JSON.stringify({ started, clients })}\n`);
process.exit(0);
