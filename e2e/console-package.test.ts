// The console's native artifacts of `npm run package` (scripts/console-sea.mjs), run the way a
// server would: the single executable from its tar.gz in a bare root (the executable, its SQLite
// addon and the C libraries they link, nothing else: no Node.js, no node_modules, no shell) inside a
// mount and network namespace of its own, as an unprivileged user; the .deb installed with dpkg and
// its unit's ExecStart run as the unit would (its user, its environment) in the same kind of root.
// Needs Linux x64, root, dpkg, ip, tar, lintian is optional; in CI a missing one fails.
import assert from 'node:assert/strict';
import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { packagedArtifacts } from './support/packages.js';
import { holdDpkgLock, signUp, tempDir } from './support/processes.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const OUT = join(ROOT, 'dist/packages');
const VERSION: string = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version;
const TARBALL = join(OUT, `palisade-console-${VERSION}-linux-x64.tar.gz`);
const DEB = join(OUT, `palisade-console_${VERSION}_amd64.deb`);
const PG_URL = process.env.PALISADE_TEST_DATABASE_URL;
const PG_SCHEMA = `console_package_${process.pid}`;
const USER = 'palisade-console';
// This file's network namespace and veth pair (helper-lettered names, docs in e2e/support/netns.ts).
const TAG = (process.pid % 100000).toString(36);
const NS = `pal-k-${TAG}`;
const HOST_LINK = `pal-k-h-${TAG}`;
const NS_LINK = `pal-k-n-${TAG}`;
const HOST_IP = `10.231.${process.pid % 250}.1`;
const NS_IP = `10.231.${process.pid % 250}.2`;
/** A user and group id. */
type Ids = [number, number];
const NOBODY: Ids = [65534, 65534];

function missing(): string | null {
  if (process.platform !== 'linux' || process.arch !== 'x64') return 'not Linux x64';
  if (process.getuid?.() !== 0) return 'not running as root';
  if (!PG_URL) return 'PALISADE_TEST_DATABASE_URL is not set';
  for (const tool of ['dpkg', 'dpkg-deb', 'ip', 'tar', 'chroot', 'unshare', 'ldd', 'useradd']) {
    if (spawnSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' }).status !== 0)
      return `\`${tool}\` is missing`;
  }
  return null;
}

const why = missing();
if (why && process.env.CI) {
  test('the console packaging suite can run', () => {
    assert.fail(`CI must run the console packaging suite, but ${why}`);
  });
}

/** chroot(8), by its path: the bare processes' PATH names no sbin. */
const CHROOT = spawnSync('sh', ['-c', 'command -v chroot'], { encoding: 'utf8' }).stdout.trim();

const sh = (cmd: string, args: string[]) =>
  execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

/**
 * A bare root: `files` (path in the root -> file to copy) and the shared libraries they link, at
 * the paths ldd names, plus empty /proc and /tmp. No shell, no Node.js, nothing else.
 */
function bareRoot(dir: string, files: Record<string, string>) {
  for (const [to, from] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, to)), { recursive: true });
    copyFileSync(from, join(dir, to));
    chmodSync(join(dir, to), statSync(from).mode & 0o777);
  }
  for (const from of Object.values(files)) {
    for (const lib of sh('ldd', [from]).matchAll(/(\/\S+\.so[.\d]*)/g)) {
      const to = join(dir, lib[1]!);
      if (existsSync(to)) continue;
      mkdirSync(dirname(to), { recursive: true });
      copyFileSync(lib[1]!, to);
    }
  }
  mkdirSync(join(dir, 'proc'));
  mkdirSync(join(dir, 'tmp'));
  chmodSync(join(dir, 'tmp'), 0o1777);
  for (const p of ['node', 'usr/bin/node', 'usr/local/bin/node', 'bin/sh'])
    assert.ok(!existsSync(join(dir, p)), `${p} in the bare root`);
}

interface Running {
  child: ChildProcess;
  url: string;
  output(): string;
  stop(): Promise<void>;
}

/**
 * Runs `argv` (paths inside `root`) chrooted into `root` as uid:gid, in this file's network
 * namespace (`ip netns exec` gives it a mount namespace too, where /proc is mounted) or, with
 * `netns` false, in a mount namespace of its own on the host's network; waits for the console's
 * listening line. Every process in the chain execs the next: the pid is the console's.
 */
function runInRoot(root: string, argv: string[], env: Record<string, string>, [uid, gid]: Ids, netns = true) {
  const inside = `mount -t proc proc "$1/proc" && exec ${CHROOT} --userspec=${uid}:${gid} --groups=${gid} "$@"`;
  const [cmd, args] = netns
    ? ['ip', ['netns', 'exec', NS, 'sh', '-c', inside, '-', root, ...argv]]
    : ['unshare', ['--mount', '--propagation', 'private', 'sh', '-c', inside, '-', root, ...argv]];
  const child = spawn(cmd as string, args as string[], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  return new Promise<Running>((resolve, reject) => {
    const onData = (d: Buffer) => {
      out += d;
      const m = /Palisade console listening on (http:\/\/\S+)/.exec(out);
      if (m)
        resolve({
          child,
          url: m[1]!,
          output: () => out,
          async stop() {
            if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
            await exited;
          },
        });
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    exited.then(() => reject(new Error(`${argv.join(' ')} exited before listening:\n${out}`)));
  });
}

/** Runs one CLI command of the executable chrooted (no network needed), answering its output. */
function cliInRoot(root: string, argv: string[], env: Record<string, string>, [uid, gid]: Ids, input?: string) {
  const inside = `mount -t proc proc "$1/proc" && exec ${CHROOT} --userspec=${uid}:${gid} --groups=${gid} "$@"`;
  return spawnSync('unshare', ['--mount', '--propagation', 'private', 'sh', '-c', inside, '-', root, ...argv], {
    env,
    encoding: 'utf8',
    input,
  });
}

/** The environment a bare process gets: no PATH to any Node.js, settings only. */
const bareEnv = (settings: Record<string, string>) => ({ PATH: '/usr/bin:/bin', ...settings });

async function login(base: string, email: string, password: string) {
  const res = await fetch(`${base}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
  return { status: res.status, cookie: res.headers.get('set-cookie')?.split(';')[0], text: await res.text() };
}

/** The dashboard's index.html and the first asset it names, as the browser would fetch them. */
async function checkDashboard(base: string) {
  const index = await fetch(`${base}/dashboard`);
  const html = await index.text();
  assert.equal(index.status, 200, html);
  assert.match(index.headers.get('content-type') ?? '', /^text\/html/);
  const asset = /\/assets\/[\w.-]+\.(?:js|css)/.exec(html)?.[0];
  assert.ok(asset, `an asset named in index.html: ${html}`);
  const res = await fetch(`${base}${asset}`);
  const body = await res.arrayBuffer();
  assert.equal(res.status, 200, asset);
  assert.equal(Buffer.from(body).compare(readFileSync(join(ROOT, 'packages/web/dist', asset))), 0, `${asset} as built`);
  assert.equal((await fetch(`${base}/assets/..%2f..%2fpackage.json`)).status, 404);
}

describe('the console as one executable and as a .deb', { skip: why ? `skipped: ${why}` : false }, () => {
  const running: Running[] = [];
  const dirs: { path: string; remove(): void }[] = [];
  const purge = () => spawnSync('dpkg', ['--purge', 'palisade-console'], { stdio: 'ignore' });
  const removeNamespace = () => {
    spawnSync('ip', ['netns', 'del', NS], { stdio: 'ignore' });
    spawnSync('ip', ['link', 'del', HOST_LINK], { stdio: 'ignore' });
  };
  let releaseLock = () => {};
  let unpacked = '';

  const dir = (prefix: string) => {
    const d = tempDir(prefix);
    dirs.push(d);
    chmodSync(d.path, 0o755); // the unprivileged console walks through it to its root
    return d.path;
  };

  before(async () => {
    releaseLock = await holdDpkgLock(); // the packaging suites share the build and dpkg
    packagedArtifacts(); // built once for every packaging suite (e2e/support/packages.ts)
    purge();
    removeNamespace();
    sh('ip', ['netns', 'add', NS]);
    sh('ip', ['link', 'add', HOST_LINK, 'type', 'veth', 'peer', 'name', NS_LINK]);
    sh('ip', ['link', 'set', NS_LINK, 'netns', NS]);
    sh('ip', ['addr', 'add', `${HOST_IP}/24`, 'dev', HOST_LINK]);
    sh('ip', ['link', 'set', HOST_LINK, 'up']);
    for (const args of [
      ['link', 'set', 'lo', 'up'],
      ['addr', 'add', `${NS_IP}/24`, 'dev', NS_LINK],
      ['link', 'set', NS_LINK, 'up'],
    ])
      sh('ip', ['netns', 'exec', NS, 'ip', ...args]);
    unpacked = dir('palisade-console-tgz-');
    sh('tar', ['-xzf', TARBALL, '-C', unpacked]);
  });

  after(async () => {
    for (const r of running) await r.stop();
    removeNamespace();
    purge();
    releaseLock();
    if (PG_URL) {
      const client = new pg.Client({ connectionString: PG_URL });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS ${PG_SCHEMA} CASCADE`);
      await client.end();
    }
    for (const d of dirs) d.remove();
  });

  test('the tar.gz holds the executable and the SQLite addon, side by side, owned by root', () => {
    const list = sh('tar', ['--list', '--verbose', '--numeric-owner', '--file', TARBALL])
      .trim()
      .split('\n')
      .map((line) => line.split(/\s+/));
    const base = `palisade-console-${VERSION}-linux-x64/`;
    assert.deepEqual(
      list.map((f) => [f[0], f[1], f[5]]),
      [
        ['drwxr-xr-x', '0/0', base],
        ['-rw-r--r--', '0/0', `${base}better_sqlite3.node`],
        ['-rwxr-xr-x', '0/0', `${base}palisade-console`],
      ],
    );
    const exe = join(unpacked, base, 'palisade-console');
    assert.equal(sh(exe, ['--version']).trim(), VERSION);
  });

  test('the executable runs in a bare root with no Node.js: register, dashboard, restart keeps the data; its CLI works', async () => {
    const root = dir('palisade-console-bare-');
    const base = join(unpacked, `palisade-console-${VERSION}-linux-x64`);
    bareRoot(root, {
      'opt/palisade-console/palisade-console': join(base, 'palisade-console'),
      'opt/palisade-console/better_sqlite3.node': join(base, 'better_sqlite3.node'),
    });
    mkdirSync(join(root, 'data'), { mode: 0o700 });
    chownSync(join(root, 'data'), ...NOBODY);
    const env = bareEnv({ PALISADE_DATA_DIR: '/data', PALISADE_HOST: NS_IP, PALISADE_PORT: '8080' });
    const exe = '/opt/palisade-console/palisade-console';

    const first = await runInRoot(root, [exe, 'serve'], env, NOBODY);
    running.push(first);
    assert.equal(first.url, `http://${NS_IP}:8080`);
    const user = { email: 'owner@example.com', password: 'correct-horse-battery', name: 'Owner' };
    const cookie = await signUp(first.url, user);
    const session = await fetch(`${first.url}/api/auth/session`, { headers: { cookie } });
    assert.equal(session.status, 200, await session.clone().text());
    assert.equal((await session.json()).data.account.email, user.email);
    await checkDashboard(first.url);
    const health = await fetch(`${first.url}/healthz`);
    assert.equal(health.status, 200);
    // The agent install script is an asset too, with this console's address filled in.
    const script = await (await fetch(`${first.url}/install/agent.sh`)).text();
    assert.match(script, /^#!\/bin\/sh/);
    assert.ok(script.includes(`'${first.url}'`), 'the console address in the script');
    // No agent packages yet: the answer names where they go (docs/deploy.md, "Agent packages").
    const sums = await fetch(`${first.url}/install/SHA256SUMS`);
    assert.equal(sums.status, 503);
    assert.match(await sums.text(), /no agent packages in \/data\/artifacts/);
    await first.stop();
    assert.equal(statSync(join(root, 'data/console.db')).uid, NOBODY[0], 'the database belongs to the user it ran as');

    // The CLI from the executable, on the same data: an admin from stdin, a backup.
    const admin = cliInRoot(
      root,
      [exe, 'admin', 'create-admin', '--email', 'root@example.com', '--password-stdin'],
      env,
      NOBODY,
      'another-long-password\n',
    );
    assert.equal(admin.status, 0, admin.stdout + admin.stderr);
    assert.match(admin.stdout, /Admin root@example.com created\./);
    const backup = cliInRoot(root, [exe, 'backup', '/data/console.backup'], env, NOBODY);
    assert.equal(backup.status, 0, backup.stdout + backup.stderr);
    assert.equal(statSync(join(root, 'data/console.backup')).mode & 0o777, 0o600);
    const key = cliInRoot(root, [exe, 'release-key', 'new', '--out', '/data/release.key'], env, NOBODY);
    assert.equal(key.status, 0, key.stdout + key.stderr);
    assert.match(key.stdout, /Public key: [A-Za-z0-9+/]{43}=/);

    const second = await runInRoot(root, [exe, 'serve'], env, NOBODY);
    running.push(second);
    for (const [email, password] of [
      [user.email, user.password],
      ['root@example.com', 'another-long-password'],
    ]) {
      const again = await login(second.url, email!, password!);
      assert.equal(again.status, 200, `${email}: ${again.text}`);
    }
    await second.stop();
  });

  test('the executable on PostgreSQL by URL, two workers: no addon needed, the account lands in the schema', async () => {
    const root = dir('palisade-console-pg-');
    const base = join(unpacked, `palisade-console-${VERSION}-linux-x64`);
    // The executable alone: a console on PostgreSQL never loads the SQLite addon.
    bareRoot(root, { 'opt/palisade-console': join(base, 'palisade-console') });
    const srv = await runInRoot(
      root,
      ['/opt/palisade-console', 'serve', '--workers', '2'],
      bareEnv({
        PALISADE_DATABASE_URL: PG_URL!,
        PALISADE_DATABASE_SCHEMA: PG_SCHEMA,
        PALISADE_DATA_DIR: '/tmp/data',
        PALISADE_PORT: '0',
        PALISADE_BOOTSTRAP_ADMIN: '0',
      }),
      NOBODY,
      false,
    );
    running.push(srv);
    // Two workers: node:cluster starts them from the executable too (src/workers.ts).
    assert.match(srv.output(), /listening on http:\/\/\S+ \(2 workers\)/);
    await signUp(srv.url, { email: 'pg@example.com', password: 'correct-horse-battery', name: 'PG' });
    await srv.stop();
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    try {
      const rows = await client.query(`SELECT email FROM ${PG_SCHEMA}.people`);
      assert.deepEqual(
        rows.rows.map((r) => r.email),
        ['pg@example.com'],
      );
    } finally {
      await client.end();
    }
  });

  test('the .deb installs its user and settings; its unit line, run as the unit would, serves the console; purge removes it', async () => {
    const installed = spawnSync('dpkg', ['--install', DEB], { encoding: 'utf8' });
    assert.equal(installed.status, 0, installed.stdout + installed.stderr);
    const uid = Number(sh('id', ['-u', USER]));
    const gid = Number(sh('id', ['-g', USER]));
    assert.ok(uid > 0 && uid < 1000, `a system user: ${uid}`);
    assert.equal(sh('getent', ['passwd', USER]).trim().split(':').at(-1), '/usr/sbin/nologin');
    const env = statSync('/etc/palisade/console.env');
    assert.deepEqual([env.mode & 0o777, env.uid, env.gid], [0o640, 0, gid]);
    assert.match(
      sh('dpkg-query', ['--showformat=$' + '{Conffiles}', '--show', 'palisade-console']),
      /\/etc\/palisade\/console\.env [0-9a-f]{32}/,
    );
    const state = statSync('/var/lib/palisade-console');
    assert.deepEqual([state.mode & 0o777, state.uid], [0o700, uid]);
    // palisade-console(8), the changelog and the SQLite addon where the executable looks for it.
    for (const file of [
      '/usr/share/man/man8/palisade-console.8.gz',
      '/usr/share/doc/palisade-console/changelog.gz',
      '/usr/lib/palisade-console/better_sqlite3.node',
    ])
      assert.ok(existsSync(file), file);

    // The unit, read as systemd would: its user, Environment=, then EnvironmentFile= over it, ExecStart.
    const unit = readFileSync('/lib/systemd/system/palisade-console.service', 'utf8');
    const values = (key: string) => [...unit.matchAll(new RegExp(`^${key}=(.*)$`, 'gm'))].map((m) => m[1]!);
    assert.deepEqual(values('User'), [USER]);
    assert.deepEqual(values('EnvironmentFile'), ['/etc/palisade/console.env']);
    assert.deepEqual(values('StateDirectory'), ['palisade-console']);
    // An operator's setting: where it listens (here, this file's namespace).
    writeFileSync(
      '/etc/palisade/console.env',
      `${readFileSync('/etc/palisade/console.env', 'utf8')}PALISADE_HOST=${NS_IP}\n`,
    );
    const settings: Record<string, string> = {};
    for (const line of [
      ...values('Environment'),
      ...readFileSync('/etc/palisade/console.env', 'utf8')
        .split('\n')
        .filter((l) => /^[A-Z_]+=/.test(l)),
    ]) {
      const i = line.indexOf('=');
      settings[line.slice(0, i)] = line.slice(i + 1);
    }
    assert.equal(settings.PALISADE_DATA_DIR, '/var/lib/palisade-console');
    const [execStart] = values('ExecStart');
    const argv = execStart!.split(' ');
    assert.deepEqual(argv, ['/usr/bin/palisade-console', 'serve']);

    // The installed files in a bare root (no Node.js), its state directory as StateDirectory= makes it.
    const root = dir('palisade-console-deb-');
    bareRoot(root, {
      'usr/bin/palisade-console': '/usr/bin/palisade-console',
      'usr/lib/palisade-console/better_sqlite3.node': '/usr/lib/palisade-console/better_sqlite3.node',
    });
    mkdirSync(join(root, 'var/lib'), { recursive: true, mode: 0o755 });
    mkdirSync(join(root, 'var/lib/palisade-console'), { mode: 0o700 });
    chownSync(join(root, 'var/lib/palisade-console'), uid, gid);
    const srv = await runInRoot(root, argv, bareEnv(settings), [uid, gid]);
    running.push(srv);
    assert.equal(srv.url, `http://${NS_IP}:8080`);
    const health = await fetch(`${srv.url}/healthz`);
    assert.equal(health.status, 200, await health.text());
    await checkDashboard(srv.url);
    await srv.stop();
    assert.ok(existsSync(join(root, 'var/lib/palisade-console/console.db')));
    assert.equal(statSync(join(root, 'var/lib/palisade-console/secret.key')).mode & 0o777, 0o600);

    const removed = spawnSync('dpkg', ['--remove', 'palisade-console'], { encoding: 'utf8' });
    assert.equal(removed.status, 0, removed.stderr);
    assert.ok(existsSync('/etc/palisade/console.env') && existsSync('/var/lib/palisade-console'), 'remove keeps data');
    const purged = spawnSync('dpkg', ['--purge', 'palisade-console'], { encoding: 'utf8' });
    assert.equal(purged.status, 0, purged.stderr);
    assert.ok(!existsSync('/etc/palisade/console.env') && !existsSync('/var/lib/palisade-console'));
    assert.notEqual(spawnSync('getent', ['passwd', USER]).status, 0, 'the user is gone');
  });

  const lintian = spawnSync('sh', ['-c', 'command -v lintian'], { stdio: 'ignore' }).status === 0;
  test('lintian finds no error and no warning in the .deb', {
    skip: lintian || process.env.CI ? false : 'lintian is not installed',
  }, () => {
    // As for the agent's .deb (e2e/packaging.test.ts): the maintainer scripts call systemctl
    // themselves, and the spelling check of the binary's strings gives information tags only.
    const res = spawnSync(
      'lintian',
      [
        '--fail-on',
        'error,warning',
        '--suppress-tags',
        'maintainer-script-calls-systemctl',
        '--dont-check-part',
        'binaries/spelling',
        DEB,
      ],
      { encoding: 'utf8' },
    );
    assert.equal(res.status, 0, res.stdout + res.stderr);
  });
});
