// Services found on the host and `protection.protect` (docs/protection.md, "Services found on the
// host"): detection against fixture host trees, the engine as the daemon runs it (monitor-only)
// applying the key once per value, and the real agent refusing an unknown service name.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { after, test } from 'node:test';
import { patternsAnswer } from '@palisade/protocol/control-schemas';
import { tempDir } from '@palisade/testkit';
import { ConfigError, parseConfig } from '../src/config/config.js';
import { defaultProtectionSettings, type ProtectSetting } from '../src/config/protection-settings.js';
import { realDeps } from '../src/deps.js';
import { ProtectionEngine } from '../src/protection/engine.js';
import { cachedServices, findServices } from '../src/protection/host-services.js';
import type { LogHost } from '../src/protection/log-sources.js';
import { runCli, writeConfig } from './agent-process.js';

const dir = tempDir();
after(() => dir.remove());

/** A fixture host tree: each path a file (mode 0755 for binaries) or, ending in `/`, a directory. */
function hostTree(name: string, paths: string[]): LogHost {
  const root = join(dir.path, name);
  for (const p of paths) {
    const at = join(root, p);
    if (p.endsWith('/')) mkdirSync(at, { recursive: true });
    else {
      mkdirSync(dirname(at), { recursive: true });
      writeFileSync(at, '', { mode: 0o755 });
    }
  }
  mkdirSync(root, { recursive: true });
  return { root, journalDirectory: join(dir.path, 'no-journal') };
}

test('services are found by their program or their systemd unit, and nothing else', () => {
  const host = hostTree('debian', [
    '/usr/sbin/sshd',
    '/usr/local/sbin/nginx', // built from source
    '/lib/systemd/system/httpd.service',
    '/etc/dovecot/dovecot.conf', // left by a package removed but not purged: not dovecot
    '/etc/apache2/conf-available/javascript-common.conf', // another package's drop-in: not apache
    '/usr/sbin/postfix/', // a directory where the program would be: not postfix
  ]);
  assert.deepEqual(findServices(host), {
    sshd: '/usr/sbin/sshd',
    nginx: '/usr/local/sbin/nginx',
    apache: '/lib/systemd/system/httpd.service',
    postfix: null,
    dovecot: null,
  });
  // The SSH client's files are not sshd; the server's unit is.
  assert.equal(findServices(hostTree('client', ['/etc/ssh/ssh_config', '/usr/bin/ssh'])).sshd, null);
  const rhel = hostTree('rhel', ['/usr/lib/systemd/system/sshd.service']);
  assert.equal(findServices(rhel).sshd, '/usr/lib/systemd/system/sshd.service');
  assert.equal(findServices(hostTree('empty', [])).nginx, null);
});

test('a look at the host is reused for 10 s, then taken again', () => {
  const host = hostTree('cached', []);
  let now = 1_000_000;
  const services = cachedServices(host, () => now);
  assert.equal(services().postfix, null);
  hostTree('cached', ['/usr/sbin/postfix']);
  now += 9_999;
  assert.equal(services().postfix, null, 'still the first look');
  now += 1;
  assert.equal(services().postfix, '/usr/sbin/postfix');
});

/** The engine as the daemon runs it (monitor-only), with `protection.protect` set and logs under `host`. */
function engineOn(stateDir: string, host: LogHost, protect: ProtectSetting) {
  return ProtectionEngine.start({
    deps: { ...realDeps(), logs: host },
    log: () => {},
    stateDir,
    settings: { ...defaultProtectionSettings(), backend: 'monitor', protect },
    alert: () => {},
    consoleUrl: () => null,
  });
}

const enabled = (e: ProtectionEngine) =>
  e
    .patternList()
    .patterns.map((p) => p.name)
    .sort();

test('GET block-pattern says which services are here, by what, and whether their patterns are enabled', async () => {
  const host = hostTree('answer', ['/usr/sbin/sshd', '/usr/sbin/nginx']);
  const e = await engineOn(join(dir.path, 'state-answer'), host, null);
  try {
    await e.addPattern({ name: 'nginx-auth' });
    const answer = e.patternList();
    assert.ok(patternsAnswer.safeParse(answer).success, 'the answer holds to its schema');
    const found = Object.fromEntries(answer.shipped.map((p) => [p.name, p.found]));
    assert.deepEqual(found, {
      sshd: '/usr/sbin/sshd',
      'nginx-auth': '/usr/sbin/nginx',
      'apache-auth': null,
      'http-scan': '/usr/sbin/nginx',
      'http-scan-apache': null,
      postfix: null,
      dovecot: null,
    });
    assert.deepEqual(answer.services, [
      { service: 'sshd', patterns: ['sshd'], found: '/usr/sbin/sshd', enabled: false },
      { service: 'nginx', patterns: ['nginx-auth', 'http-scan'], found: '/usr/sbin/nginx', enabled: false },
      { service: 'apache', patterns: ['apache-auth', 'http-scan-apache'], found: null, enabled: false },
      { service: 'postfix', patterns: ['postfix'], found: null, enabled: false },
      { service: 'dovecot', patterns: ['dovecot'], found: null, enabled: false },
    ]);
    await e.addPattern({ name: 'http-scan' });
    assert.equal(e.patternList().services.find((s) => s.service === 'nginx')?.enabled, true);
  } finally {
    await e.stop();
  }
});

test('protection.protect enables its services once per value: a removed pattern stays removed until the value changes', async () => {
  const host = hostTree('protect', ['/usr/sbin/sshd', '/usr/sbin/nginx', '/usr/sbin/apache2']);
  const state = join(dir.path, 'state-protect');
  let e = await engineOn(state, host, ['sshd', 'nginx']);
  assert.deepEqual(enabled(e), ['http-scan', 'nginx-auth', 'sshd']);
  assert.equal(e.patternList().patterns.find((p) => p.name === 'sshd')?.source, 'auto');
  e.removePattern('sshd');
  await e.stop();
  const applied = JSON.parse(readFileSync(join(state, 'protection', 'protect.json'), 'utf8'));
  assert.deepEqual(applied, { applied: 'sshd,nginx' });

  // The same value at the next start: applied already, so sshd stays removed.
  e = await engineOn(state, host, ['sshd', 'nginx']);
  assert.deepEqual(enabled(e), ['http-scan', 'nginx-auth']);
  await e.stop();

  // A changed value is applied: auto enables every service found here (apache too), sshd again.
  e = await engineOn(state, host, 'auto');
  assert.deepEqual(enabled(e), ['apache-auth', 'http-scan', 'http-scan-apache', 'nginx-auth', 'sshd']);
  await e.stop();

  // Unset: nothing is removed, and setting the same value again later applies it again.
  e = await engineOn(state, host, null);
  e.removePattern('sshd');
  assert.deepEqual(enabled(e), ['apache-auth', 'http-scan', 'http-scan-apache', 'nginx-auth']);
  await e.stop();
  e = await engineOn(state, host, 'auto');
  assert.ok(enabled(e).includes('sshd'));
  await e.stop();
});

test('protection.protect names a service that is not found: its patterns are enabled all the same', async () => {
  const e = await engineOn(join(dir.path, 'state-named'), hostTree('bare', []), ['postfix', 'dovecot']);
  try {
    assert.deepEqual(enabled(e), ['dovecot', 'postfix']);
  } finally {
    await e.stop();
  }
});

test('protection.protect: auto, names in any order, or a clear refusal naming the key and the valid names', async () => {
  const parse = (v: string) => parseConfig(`protection.protect = ${v}\n`, 'agent.conf').protection.protect;
  assert.equal(parse('auto'), 'auto');
  assert.deepEqual(parse('nginx, sshd'), ['sshd', 'nginx']);
  assert.equal(parse(''), null);
  assert.throws(
    () => parse('sshd,ftp'),
    (err: Error) =>
      err instanceof ConfigError &&
      err.message ===
        'agent.conf:1: bad value for protection.protect: unknown service "ftp": expected auto or service names from sshd, nginx, apache, postfix, dovecot (e.g. sshd,nginx)',
  );
  assert.throws(() => parse('auto,sshd'), /protection\.protect: auto stands alone/);

  // The real agent refuses to start with it, saying so.
  const configFile = join(dir.path, 'bad.conf');
  writeConfig(configFile, { 'metrics.listen': '127.0.0.1:0', 'protection.protect': 'sshd,ftp' });
  const run = await runCli(['run', '--config', configFile, '--state-dir', join(dir.path, 'state-bad')]);
  assert.notEqual(run.code, 0);
  assert.match(
    run.out,
    /bad value for protection\.protect: unknown service "ftp": expected auto or service names from sshd, nginx/,
  );
});
