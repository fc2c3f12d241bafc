// Block patterns reading the systemd journal against a real systemd-journald (run in a private
// mount namespace, writing its journal files into a temp directory), and `source: auto` choosing
// /var/log/secure on an RHEL-style fixture tree (docs/protection.md, "Where a pattern reads").
// Needs root, unshare and /lib/systemd/systemd-journald: skipped without them, a failure under CI=true.
import assert from 'node:assert/strict';
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { tempDir } from '@palisade/testkit';
import { defaultProtectionSettings } from '../src/config/protection-settings.js';
import { realDeps } from '../src/deps.js';
import { ProtectionEngine } from '../src/protection/engine.js';
import { type LogHost, patternSources } from '../src/protection/log-sources.js';

const JOURNALD = '/lib/systemd/systemd-journald';
const usable = process.getuid?.() === 0 && existsSync(JOURNALD) && existsSync('/usr/bin/unshare');
if (!usable && process.env.CI === 'true')
  throw new Error('protection-journal needs root, unshare and systemd-journald');

const dir = tempDir();
const run = join(dir.path, 'run');
const journal = join(dir.path, 'journal');
let journald: ChildProcess | null = null;

// journald in its own mount namespace: /run is an empty tmpfs there, its socket directory and
// /var/log/journal are this test's directories, so the host's logging is never touched.
const NS = `set -e
mount -t tmpfs tmpfs /run
mkdir -p /run/systemd/journal /run/log /var/log/journal
mount --bind ${run} /run/systemd/journal
mount --bind ${journal} /var/log/journal
${JOURNALD} &
J=$!
trap 'kill $J; wait $J; exit 0' TERM
for i in $(seq 100); do [ -S /run/systemd/journal/io.systemd.journal ] && break; sleep 0.05; done
journalctl --flush
echo READY
wait $J`;

before(async () => {
  if (!usable) return;
  mkdirSync(run, { recursive: true });
  mkdirSync(journal, { recursive: true });
  journald = spawn('unshare', ['-m', '--propagation', 'private', 'bash', '-c', NS], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    let out = '';
    journald!.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      if (out.includes('READY')) resolve();
    });
    journald!.on('close', (code) => reject(new Error(`journald namespace exited ${code}`)));
  });
});
after(async () => {
  if (journald && journald.exitCode === null) {
    const closed = new Promise((r) => journald!.once('close', r));
    journald.kill('SIGTERM');
    await closed;
  }
  dir.remove();
});

/** One entry as sshd writes it: through journald's syslog socket, identifier sshd. */
function sshd(message: string) {
  execFileSync('logger', ['--socket', join(run, 'dev-log'), '--socket-errors=on', '-t', 'sshd', '--id=4242', message]);
}

/**
 * The agent's protection engine as the daemon runs it (monitor-only: nothing is enforced here),
 * reading logs under `logs`: its detection loop polls the patterns every 50 ms.
 */
function engineOn(stateDir: string, logs: LogHost) {
  return ProtectionEngine.start({
    deps: { ...realDeps(), logs },
    log: () => {},
    stateDir,
    settings: { ...defaultProtectionSettings(), backend: 'monitor', checkIntervalMs: 50 },
    alert: () => {},
    consoleUrl: () => null,
  });
}

const pattern = (e: ProtectionEngine) => e.patternList().patterns[0]!;

/** Waits until `n` entries have been matched (counted, never slept on); answers the count then. */
async function matched(e: ProtectionEngine, n: number): Promise<number> {
  for (let i = 0; i < 400 && pattern(e).matches < n; i++) await new Promise((r) => setTimeout(r, 25));
  return pattern(e).matches;
}

/** The addresses the engine banned for an attack. */
const banned = (e: ProtectionEngine) =>
  e
    .listEntries('blacklist')
    .entries.filter((x: { source: string }) => x.source === 'attack')
    .map((x: { ip: string }) => x.ip);

const failed = (ip: string) => `Failed password for root from ${ip} port 22 ssh2`;

test('sshd on a host that logs only to the journal: source auto reads the journal, resumes after a restart without loss or repeats', {
  skip: !usable,
}, async () => {
  const root = join(dir.path, 'journal-host');
  mkdirSync(join(root, 'var/log'), { recursive: true });
  const logs: LogHost = { root, journalDirectory: journal };
  const state = join(dir.path, 'state-j');
  sshd(failed('198.51.100.1')); // before the pattern: not read
  let w = await engineOn(state, logs);
  await w.addPattern({ name: 'sshd', threshold: 3 });
  const listed = pattern(w);
  assert.equal(listed.source, 'auto');
  assert.equal(listed.reads, 'journal: sshd, ssh.service, sshd.service');
  sshd(failed('203.0.113.7'));
  sshd('Accepted publickey for deploy from 203.0.113.9 port 1 ssh2');
  sshd(failed('203.0.113.7'));
  assert.equal(await matched(w, 2), 2, JSON.stringify(pattern(w)));
  await w.stop();
  // Written while the agent is down, then read once by the next one (after the saved cursor).
  sshd(failed('203.0.113.7'));
  sshd(failed('203.0.113.8'));
  w = await engineOn(state, logs);
  assert.equal(await matched(w, 2), 2, JSON.stringify(pattern(w)));
  // One read twice would make 3 here at once; one lost, never 4 below.
  sshd(failed('203.0.113.8'));
  sshd(failed('203.0.113.8'));
  assert.equal(await matched(w, 4), 4);
  const listedAfter = pattern(w);
  assert.equal(listedAfter.source_error, null);
  // 203.0.113.8: once while the agent was down, twice after: the threshold (3) is reached and it is
  // banned; 203.0.113.7's hits before the restart are not carried over (the counter is in memory).
  assert.deepEqual(banned(w), ['203.0.113.8']);
  await w.stop();
  const cursors = readFileSync(join(state, 'protection', 'journal-cursors.json'), 'utf8');
  assert.match(cursors, /^\{"journal:sshd,ssh\.service,sshd\.service":"s=[0-9a-f]+;i=[0-9a-f]+;/);
});

test('a missing journal is a source_error, not a crash', { skip: !usable }, async () => {
  const logs: LogHost = { root: join(dir.path, 'nothing'), journalDirectory: join(dir.path, 'no-journal') };
  const w = await engineOn(join(dir.path, 'state-m'), logs);
  await w.addPattern({ name: 'sshd', source: 'journal' });
  let error: string | null | undefined = null;
  for (let i = 0; i < 400 && !error?.includes('exited'); i++) {
    error = pattern(w).source_error;
    await new Promise((r) => setTimeout(r, 25));
  }
  assert.match(String(error), /journalctl exited \(code 1\).*no-journal/);
  await w.stop();
});

test('source auto reads /var/log/secure on an RHEL-style layout', async () => {
  const root = join(dir.path, 'rhel');
  mkdirSync(join(root, 'var/log'), { recursive: true });
  const secure = join(root, 'var/log/secure');
  writeFileSync(secure, '');
  const w = await engineOn(join(dir.path, 'state-r'), { root, journalDirectory: join(dir.path, 'no-journal') });
  await w.addPattern({ name: 'sshd', threshold: 2 });
  assert.equal(pattern(w).reads, '/var/log/secure');
  writeFileSync(
    secure,
    `Nov 28 10:00:00 host sshd[77]: ${failed('192.0.2.44')}\nNov 28 10:00:01 host sshd[77]: ${failed('192.0.2.44')}\n`,
  );
  assert.equal(await matched(w, 2), 2);
  assert.deepEqual(banned(w), ['192.0.2.44']);
  await w.stop();
});

test('palisade-agent info says which source each pattern reads: the auto choice and whether it can be read', () => {
  const rhel = join(dir.path, 'rhel-info');
  mkdirSync(join(rhel, 'var/log'), { recursive: true });
  writeFileSync(join(rhel, 'var/log/secure'), '');
  const journalHost = join(dir.path, 'journal-info');
  mkdirSync(join(journalHost, 'var/log/journal/abc'), { recursive: true });
  const state = join(dir.path, 'state-info');
  mkdirSync(join(state, 'protection'), { recursive: true });
  writeFileSync(
    join(state, 'protection', 'patterns.json'),
    JSON.stringify([
      { name: 'sshd', source: 'auto' },
      { name: 'app', file: '/srv/app.log', regex: 'x (?<ip>\\S+)', threshold: 3, window_s: 60, ban_s: 60 },
      { name: 7 },
    ]),
  );
  const onRhel = patternSources(state, { root: rhel, journalDirectory: null });
  assert.equal(onRhel.error, null);
  assert.deepEqual(
    onRhel.rows.find((r) => r.name === 'sshd'),
    {
      name: 'sshd',
      enabled: true,
      source: 'auto',
      reads: '/var/log/secure',
      problem: null,
    },
  );
  assert.deepEqual(
    onRhel.rows.filter((r) => r.enabled).map((r) => [r.name, r.reads, r.problem]),
    [
      ['sshd', '/var/log/secure', null],
      ['app', '/srv/app.log', '/srv/app.log does not exist (yet)'],
    ],
  );
  const onJournal = patternSources(state, { root: journalHost, journalDirectory: null });
  assert.equal(onJournal.rows.find((r) => r.name === 'sshd')!.reads, 'journal: sshd, ssh.service, sshd.service');
  assert.equal(onJournal.rows.find((r) => r.name === 'dovecot')!.reads, 'journal: dovecot');
  assert.equal(onJournal.rows.find((r) => r.name === 'dovecot')!.enabled, false);
});
