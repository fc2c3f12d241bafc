// The artifacts of `npm run package` (scripts/package.mjs), installed and run the way a server
// would: the single executable with no Node.js and no node_modules, the .mjs bundle with Node, the
// .deb installed with dpkg and its daemon run as the unit runs it (its own user, CAP_NET_ADMIN
// only, here inside a network namespace instead of systemd), and the npm tarballs installed with
// `npm install -g`. Needs Linux x64, root, dpkg, ip, setpriv and nft; in CI a missing one fails.
import assert from 'node:assert/strict';
import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { generateKeyPairSync, verify } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  lstatSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import pg from 'pg';
import { packagedArtifacts } from './support/packages.js';
import { eventually, holdDpkgLock, startConsoleProcess, tempDir } from './support/processes.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const OUT = join(ROOT, 'dist/packages');
const VERSION: string = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version;
const EXE = join(OUT, `palisade-agent-${VERSION}-linux-x64`);
const MJS = join(OUT, `palisade-agent-${VERSION}.mjs`);
const GEO_TAR = join(OUT, `palisade-agent-${VERSION}-geo.tar`);
const DEB = join(OUT, `palisade-agent_${VERSION}_amd64.deb`);
const NS = `ppk-${(process.pid % 100000).toString(36)}`;
const USER = 'palisade-agent';
const PG_URL = process.env.PALISADE_TEST_DATABASE_URL;
const PG_SCHEMA = `packaging_${process.pid}`;

function missing(): string | null {
  if (process.platform !== 'linux' || process.arch !== 'x64') return 'not Linux x64';
  if (process.getuid?.() !== 0) return 'not running as root';
  if (!PG_URL) return 'PALISADE_TEST_DATABASE_URL is not set (the installed console runs on PostgreSQL)';
  for (const tool of ['dpkg', 'dpkg-deb', 'ip', 'setpriv', 'nft', 'useradd', 'objdump', 'readelf', 'md5sum']) {
    if (spawnSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' }).status !== 0)
      return `\`${tool}\` is missing`;
  }
  return null;
}

const why = missing();
if (why && process.env.CI) {
  test('the packaging suite can run', () => {
    assert.fail(`CI must run the packaging suite, but ${why}`);
  });
}

const sh = (cmd: string, args: string[], env?: NodeJS.ProcessEnv) =>
  execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env });
const keyIn = (text: string) => /agk_[0-9A-Za-z]+/.exec(text)?.[0];

interface Daemon {
  child: ChildProcess;
  url: string;
  output(): string;
  stop(): Promise<void>;
}

/** Spawns a `palisade-agent run` command line and waits for its `listening on` line. */
function runDaemon(cmd: string, args: string[], env: NodeJS.ProcessEnv, cwd?: string): Promise<Daemon> {
  const child = spawn(cmd, args, { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  return new Promise((resolve, reject) => {
    const onData = (d: Buffer) => {
      out += d;
      const m = /palisade-agent listening on (https?:\/\/\S+)/.exec(out);
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
    exited.then(() => reject(new Error(`${cmd} exited before listening:\n${out}`)));
  });
}

async function get(url: string, key: string, init: RequestInit = {}) {
  const res = await fetch(url, {
    ...init,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
  });
  const text = await res.text();
  // biome-ignore lint/suspicious/noExplicitAny: tests read answer fields directly and assert on them
  let json: any = null;
  try {
    json = JSON.parse(text);
  } catch {}
  return { status: res.status, json, text };
}

/** Turns geo on for one country and waits until its ranges are loaded: the geo data is where it should be. */
async function checkGeo(url: string, key: string) {
  const set = await get(`${url}/geo/mode`, key, {
    method: 'POST',
    body: JSON.stringify({ mode: 'deny', countries: ['DE'] }),
  });
  assert.equal(set.status, 200, set.text);
  const loaded = await eventually('the geo ranges', async () => {
    const r = await get(`${url}/geo/mode`, key);
    return r.json?.loading === false ? r.json : undefined;
  });
  assert.equal(loaded.error, null);
  assert.ok(loaded.ranges > 1000, `ranges of DE: ${loaded.ranges}`);
}

/** A config for a test daemon on loopback that leaves the host's firewall alone. */
function loopbackConfig(file: string) {
  writeFileSync(
    file,
    'metrics.listen = 127.0.0.1:0\nmetrics.collector_timeout_ms = 10000\nprotection.backend = monitor\n',
  );
}

describe('the packaged agent, console and CLI', { skip: why ? `skipped: ${why}` : false }, () => {
  const daemons: Daemon[] = [];
  const dirs: { remove(): void }[] = [];
  const purge = () => spawnSync('dpkg', ['--purge', 'palisade-agent'], { stdio: 'ignore' });
  const removeNamespace = () => spawnSync('ip', ['netns', 'del', NS], { stdio: 'ignore' });

  let releaseLock = () => {};

  before(async () => {
    releaseLock = await holdDpkgLock(); // e2e/install.test.ts installs the same package
    packagedArtifacts(); // built once for both suites (e2e/support/packages.ts)
    purge();
  });

  after(async () => {
    for (const d of daemons) await d.stop();
    removeNamespace();
    purge();
    releaseLock();
    for (const d of dirs) d.remove();
  });

  test('SHA256SUMS covers every artifact', () => {
    const sums = readFileSync(join(OUT, 'SHA256SUMS'), 'utf8').trim().split('\n');
    const names = sums.map((line) => line.split('  ')[1]);
    for (const file of [EXE, MJS, GEO_TAR, DEB]) assert.ok(names.includes(file.slice(OUT.length + 1)), file);
    const check = spawnSync('sha256sum', ['--check', '--quiet', 'SHA256SUMS'], { cwd: OUT, encoding: 'utf8' });
    assert.equal(check.status, 0, check.stdout + check.stderr);
  });

  test('a second build of the same commit is byte-identical, artifact by artifact; --sign-key signs SHA256SUMS', () => {
    // The ar header of the .deb's first member carries the build's SOURCE_DATE_EPOCH (bytes 24–35 after
    // the `!<arch>\n` magic). The second build uses that one: the artifacts may be from an earlier commit
    // with the same inputs (e2e/support/packages.ts).
    const epoch = Number(
      readFileSync(DEB)
        .subarray(8 + 16, 8 + 28)
        .toString('ascii')
        .trim(),
    );
    assert.ok(epoch > 1_600_000_000, `the .deb's time: ${epoch}`);
    const dir = tempDir('palisade-rebuild-');
    dirs.push(dir);
    // Signed this time (docs/console.md, "Release key"): signing adds two files and changes no artifact.
    const key = generateKeyPairSync('ed25519');
    const keyDir = tempDir('palisade-release-key-');
    dirs.push(keyDir);
    const keyFile = join(keyDir.path, 'release.key');
    writeFileSync(keyFile, key.privateKey.export({ format: 'pem', type: 'pkcs8' }), { mode: 0o600 });
    const again = spawnSync(process.execPath, [join(ROOT, 'scripts/package.mjs'), '--out', dir.path], {
      encoding: 'utf8',
      env: { ...process.env, SOURCE_DATE_EPOCH: String(epoch), PALISADE_SIGN_KEY: keyFile },
    });
    assert.equal(again.status, 0, again.stdout + again.stderr);
    const artifacts = readdirSync(OUT)
      .filter((f) => !f.startsWith('.') && f !== 'SHA256SUMS.sig' && f !== 'release.pub')
      .sort();
    assert.deepEqual(readdirSync(dir.path).sort(), [...artifacts, 'SHA256SUMS.sig', 'release.pub'].sort());
    const pub = Buffer.from(key.publicKey.export({ format: 'jwk' }).x!, 'base64url').toString('base64');
    assert.equal(readFileSync(join(dir.path, 'release.pub'), 'utf8'), `${pub}\n`);
    const sums = readFileSync(join(dir.path, 'SHA256SUMS'));
    assert.ok(verify(null, sums, key.publicKey, readFileSync(join(dir.path, 'SHA256SUMS.sig'))), 'signed by the key');
    const differ = artifacts.filter((f) => !readFileSync(join(OUT, f)).equals(readFileSync(join(dir.path, f))));
    assert.deepEqual(differ, [], 'artifacts that differ between two builds');

    // What makes them so: members in name order, each dated SOURCE_DATE_EPOCH, owned by root by number.
    const utc = { ...process.env, TZ: 'UTC' };
    const listings = {
      geo: sh('tar', ['--list', '--verbose', '--numeric-owner', '--full-time', '--file', GEO_TAR], utc),
      deb: sh(
        'sh',
        ['-c', 'dpkg-deb --fsys-tarfile "$1" | tar --list --verbose --numeric-owner --full-time', '-', DEB],
        utc,
      ),
    };
    const date = new Date(epoch * 1000).toISOString().slice(0, 19).replace('T', ' ');
    for (const [which, listing] of Object.entries(listings)) {
      const members = listing
        .trim()
        .split('\n')
        .map((line) => /^\S+ (\S+) +\d+ (\S+ \S+) (.+)$/.exec(line));
      assert.ok(members.length > 2, listing);
      for (const m of members) {
        assert.ok(m, `${which}: ${listing}`);
        assert.deepEqual([m[1], m[2]], ['0/0', date], `${which}: ${m[0]}`);
      }
      const names = members.map((m) => m![3]!);
      assert.deepEqual(names, [...names].sort(), `${which}: members in name order`);
    }
  });

  test('the .deb has what Debian asks of a package: Depends from the executable, stripped, changelog, man page, md5sums', () => {
    const dir = tempDir('palisade-deb-');
    dirs.push(dir);
    sh('dpkg-deb', ['--extract', DEB, dir.path]);
    sh('dpkg-deb', ['--control', DEB, join(dir.path, 'DEBIAN')]);
    const exe = join(dir.path, 'usr/bin/palisade-agent');

    // Depends names the glibc the executable asks for (its highest GLIBC_ symbol version), and
    // libgcc_s by both names: libgcc1 up to Debian 10, libgcc-s1 from 11.
    const versions = sh('sh', ['-c', 'objdump --dynamic-syms "$1" | grep -o "GLIBC_[0-9.]*" | sort -u', '-', exe]);
    const glibc = [...versions.matchAll(/\bGLIBC_(\d+(?:\.\d+)+)/g)]
      .map((m) => m[1]!)
      .sort((a, b) => a.localeCompare(b, 'en', { numeric: true }))
      .at(-1);
    const depends = /^Depends: (.*)$/m.exec(readFileSync(join(dir.path, 'DEBIAN/control'), 'utf8'))?.[1] ?? '';
    const clauses = depends.split(', ');
    assert.deepEqual(
      clauses.filter((c) => c.startsWith('libc6')),
      [`libc6 (>= ${glibc})`],
      depends,
    );
    assert.ok(
      clauses.some((c) => /^libgcc-s1 \(>= [\d.]+\) \| libgcc1 \(>= 1:[\d.]+\)$/.test(c)),
      `libgcc on Debian 10 too: ${depends}`,
    );

    // Stripped: no symbol table, no debug sections (the SEA blob still works: the other tests run it).
    const sections = sh('readelf', ['--section-headers', '--wide', exe]);
    assert.doesNotMatch(sections, /\s\.(symtab|debug_\w+)\s/, 'stripped');
    // Node's binary is position-dependent; the override saying so is there exactly as long as that holds.
    const pie = /Type:\s+DYN/.test(sh('readelf', ['--file-header', exe]));
    const overrides = readFileSync(join(dir.path, 'usr/share/lintian/overrides/palisade-agent'), 'utf8');
    assert.equal(overrides.includes('hardening-no-pie [usr/bin/palisade-agent]'), !pie);

    // changelog and man page: gzip -n (no name, no time), the changelog's entry is this version's.
    const gunzip = (path: string) => {
      const gz = readFileSync(path);
      assert.deepEqual([gz[3], gz.readUInt32LE(4)], [0, 0], `${path}: no name, no time in the gzip header`);
      return gunzipSync(gz).toString('utf8');
    };
    const changelog = gunzip(join(dir.path, 'usr/share/doc/palisade-agent/changelog.gz'));
    assert.match(
      changelog,
      new RegExp(`^palisade-agent \\(${VERSION.replaceAll('.', '\\.')}\\) unstable; urgency=medium\n`),
    );
    assert.match(changelog, /\n -- Palisade <[^>]+> {2}\w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} \+0000\n$/);
    const man = gunzip(join(dir.path, 'usr/share/man/man8/palisade-agent.8.gz'));
    assert.match(man, /^\.TH PALISADE-AGENT 8 /);
    // One source: every command of the CLI's own --help has its section, with its options.
    const run = spawnSync(exe, ['--help'], { encoding: 'utf8' });
    // Nothing on stderr: Node warns "Code cache data rejected" there when the blob's V8 code cache
    // was made with flags the executable does not run with (see scripts/package.mjs).
    assert.deepEqual([run.status, run.stderr], [0, '']);
    const help = run.stdout;
    const commands = [...help.slice(help.indexOf('Commands:')).matchAll(/^ {2}([a-z-]+)/gm)]
      .map((m) => m[1]!)
      .filter((c) => c !== 'help');
    assert.ok(commands.length > 5, help);
    for (const command of commands)
      assert.ok(man.includes(`.SS "palisade\\-agent ${command.replaceAll('-', '\\-')}`), command);
    assert.ok(man.includes('\\-\\-state\\-dir'), 'the options of the commands');

    // md5sums covers every file dpkg does not treat as a conffile.
    const md5 = spawnSync('md5sum', ['--check', '--strict', join(dir.path, 'DEBIAN/md5sums')], {
      cwd: dir.path,
      encoding: 'utf8',
    });
    assert.equal(md5.status, 0, md5.stdout + md5.stderr);
    assert.match(md5.stdout, /usr\/bin\/palisade-agent: OK/);
  });

  const lintian = spawnSync('sh', ['-c', 'command -v lintian'], { stdio: 'ignore' }).status === 0;
  test('lintian finds no error and no warning in the .deb', {
    skip: lintian || process.env.CI ? false : 'lintian is not installed',
  }, () => {
    // maintainer-script-calls-systemctl: the maintainer scripts (preinst, postinst, prerm, postrm)
    // call systemctl themselves rather than through deb-systemd-helper; they are looked at apart.
    // The spelling check of the binary's strings (a third of lintian's time here) can only give
    // information tags, which pass anyway.
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

  test('the single executable runs with no Node.js on PATH and no node_modules', async () => {
    const dir = tempDir('palisade-sea-');
    dirs.push(dir);
    const exe = join(dir.path, 'palisade-agent');
    copyFileSync(EXE, exe);
    sh('chmod', ['755', exe]);
    const env = { PATH: '/usr/sbin:/sbin', HOME: dir.path };
    for (const p of env.PATH.split(':')) assert.ok(!existsSync(join(p, 'node')), `node found in ${p}`);
    assert.ok(!existsSync(join(dir.path, 'node_modules')));

    const configFile = join(dir.path, 'agent.conf');
    loopbackConfig(configFile);
    const stateDir = join(dir.path, 'state');
    const made = spawnSync(exe, ['key', '--config', configFile, '--state-dir', stateDir], {
      env,
      cwd: dir.path,
      encoding: 'utf8',
    });
    const key = keyIn(made.stdout);
    assert.ok(made.status === 0 && key, made.stdout + made.stderr);
    // The CPU benchmark's worker threads start from eval'd source: the executable has no worker file.
    const bench = spawnSync(exe, ['bench', '--quick', '--json', '--config', configFile, '--state-dir', stateDir], {
      env,
      cwd: dir.path,
      encoding: 'utf8',
    });
    assert.equal(bench.status, 0, bench.stderr);
    const cpu = JSON.parse(bench.stdout).report.measurements.cpu;
    assert.ok(cpu.single_mb_s > 0 && cpu.multi_mb_s > 0 && cpu.compress_mb_s > 0, JSON.stringify(cpu));
    const daemon = await runDaemon(exe, ['run', '--config', configFile, '--state-dir', stateDir], env, dir.path);
    daemons.push(daemon);

    const health = await get(`${daemon.url}/health`, key);
    assert.equal(health.status, 200, health.text);
    assert.deepEqual([health.json.status, health.json.version], ['ok', VERSION]);
    const metrics = await eventually('a first sample', async () => {
      const r = await get(`${daemon.url}/metrics`, key);
      return r.status === 200 ? r.json : undefined;
    });
    assert.equal(metrics.agent.version, VERSION);
    assert.equal(typeof metrics.host.hostname, 'string');
    await checkGeo(daemon.url, key);
    const prom = await get(`${daemon.url}/metrics/prometheus`, key);
    assert.equal(prom.status, 200);
  });

  test('the .mjs bundle runs with Node alone; geo ranges from palisade-agent-geo/ beside it', async () => {
    const dir = tempDir('palisade-mjs-');
    dirs.push(dir);
    const bundle = join(dir.path, 'palisade-agent.mjs');
    copyFileSync(MJS, bundle);
    sh('tar', ['-xf', GEO_TAR, '-C', dir.path]);
    const env = { PATH: process.env.PATH ?? '', HOME: dir.path };
    const help = spawnSync(process.execPath, [bundle, '--help'], { env, cwd: dir.path, encoding: 'utf8' });
    assert.equal(help.status, 0, help.stderr);
    assert.match(help.stdout, /Usage: palisade-agent/);

    const configFile = join(dir.path, 'agent.conf');
    loopbackConfig(configFile);
    const stateDir = join(dir.path, 'state');
    const made = spawnSync(process.execPath, [bundle, 'key', '--config', configFile, '--state-dir', stateDir], {
      env,
      encoding: 'utf8',
    });
    const key = keyIn(made.stdout);
    assert.ok(made.status === 0 && key, made.stdout + made.stderr);
    const daemon = await runDaemon(
      process.execPath,
      [bundle, 'run', '--config', configFile, '--state-dir', stateDir],
      env,
      dir.path,
    );
    daemons.push(daemon);
    const health = await get(`${daemon.url}/health`, key);
    assert.equal(health.status, 200, health.text);
    assert.equal(health.json.version, VERSION);
    await checkGeo(daemon.url, key);
  });

  test('the .deb installs, runs as its own user with CAP_NET_ADMIN, rotates its key, and removes cleanly', async () => {
    const installed = spawnSync('dpkg', ['--install', DEB], { encoding: 'utf8' });
    assert.equal(installed.status, 0, installed.stdout + installed.stderr);

    const passwd = sh('getent', ['passwd', USER]).trim().split(':');
    const [uid, gid] = [Number(passwd[2]), Number(passwd[3])];
    assert.ok(uid > 0 && uid < 1000, `a system user: ${passwd.join(':')}`);
    assert.match(passwd[6]!, /nologin|false/);
    const expect = (path: string, mode: number, owner: number) => {
      const s = statSync(path);
      assert.equal((s.mode & 0o7777).toString(8), mode.toString(8), `mode of ${path}`);
      assert.equal(s.uid, owner, `owner of ${path}`);
    };
    expect('/usr/bin/palisade-agent', 0o755, 0);
    expect('/etc/palisade-agent', 0o700, uid);
    expect('/etc/palisade-agent/agent.conf', 0o600, uid);
    expect('/var/lib/palisade-agent', 0o700, uid);
    assert.equal(statSync('/etc/palisade-agent/agent.conf').gid, gid);
    const unit = readFileSync('/lib/systemd/system/palisade-agent.service', 'utf8');
    for (const line of [
      `User=${USER}`,
      'AmbientCapabilities=CAP_NET_ADMIN',
      'CapabilityBoundingSet=CAP_NET_ADMIN',
      'ExecStart=/usr/bin/palisade-agent run --config /etc/palisade-agent/agent.conf --state-dir /var/lib/palisade-agent',
      'StateDirectory=palisade-agent',
      'NoNewPrivileges=yes',
      'ProtectSystem=strict',
    ])
      assert.ok(unit.includes(`${line}\n`), `the unit has ${line}`);
    assert.match(
      sh('dpkg-query', ['--showformat=$' + '{Conffiles}', '--show', 'palisade-agent']),
      /\/etc\/palisade-agent\/agent\.conf/,
    );

    // The unit's run, without systemd: a network namespace of its own, the unit's user, only CAP_NET_ADMIN.
    removeNamespace();
    sh('ip', ['netns', 'add', NS]);
    sh('ip', ['netns', 'exec', NS, 'ip', 'link', 'set', 'lo', 'up']);
    const env = { PATH: '/usr/sbin:/usr/bin:/sbin:/bin' };
    // `sudo palisade-agent key` as an admin would type it: root, and the key stays readable by the daemon.
    const key1 = keyIn(sh('ip', ['netns', 'exec', NS, '/usr/bin/palisade-agent', 'key'], env));
    assert.ok(key1);
    expect('/var/lib/palisade-agent/agent-key.json', 0o600, uid);
    const setpriv = [
      `--reuid=${USER}`,
      `--regid=${USER}`,
      '--init-groups',
      '--inh-caps=-all,+net_admin',
      '--ambient-caps=-all,+net_admin',
      '--bounding-set=-all,+net_admin',
      '--no-new-privs',
    ];
    const daemon = await runDaemon(
      'ip',
      [
        'netns',
        'exec',
        NS,
        'setpriv',
        ...setpriv,
        '/usr/bin/palisade-agent',
        'run',
        '--config',
        '/etc/palisade-agent/agent.conf',
        '--state-dir',
        '/var/lib/palisade-agent',
      ],
      env,
    );
    daemons.push(daemon);
    const status = readFileSync(`/proc/${daemon.child.pid}/status`, 'utf8');
    assert.match(status, new RegExp(`^Uid:\\s+${uid}\\s`, 'm'));
    assert.match(status, /^CapEff:\s+0000000000001000$/m, 'CAP_NET_ADMIN and nothing else');

    // The daemon listens on 0.0.0.0:9740 inside the namespace: ask from there.
    const inNs = (path: string, key: string) => {
      const script =
        'const [u,k]=process.argv.slice(1);fetch(u,{headers:{authorization:"Bearer "+k}})' +
        '.then(async r=>console.log(JSON.stringify({status:r.status,body:await r.text()})))' +
        '.catch(e=>console.log(JSON.stringify({status:0,body:e.message})))';
      const r = JSON.parse(
        sh('ip', ['netns', 'exec', NS, process.execPath, '-e', script, `http://127.0.0.1:9740${path}`, key]),
      );
      let json: { [k: string]: unknown } | null = null;
      try {
        json = JSON.parse(r.body);
      } catch {}
      return { status: r.status as number, body: r.body as string, json };
    };
    const health = inNs('/health', key1);
    assert.equal(health.status, 200, health.body);
    assert.equal(health.json?.version, VERSION);
    // biome-ignore lint/suspicious/noExplicitAny: tests read answer fields directly and assert on them
    const metrics: any = await eventually('a first sample', async () => {
      const r = inNs('/metrics', key1);
      return r.status === 200 ? r.json : undefined;
    });
    assert.equal(metrics.agent.version, VERSION);
    assert.equal(
      metrics.protection.backend,
      'nftables',
      `CAP_NET_ADMIN is enough for nftables: ${metrics.protection.backend_reason}`,
    );

    const key2 = keyIn(sh('ip', ['netns', 'exec', NS, '/usr/bin/palisade-agent', 'key'], env));
    assert.ok(key2 && key2 !== key1);
    expect('/var/lib/palisade-agent/agent-key.json', 0o600, uid);
    assert.equal(inNs('/health', key1).status, 401, 'the old key is refused at once');
    assert.equal(inNs('/health', key2).status, 200);
    await daemon.stop();

    const removed = spawnSync('dpkg', ['--remove', 'palisade-agent'], { encoding: 'utf8' });
    assert.equal(removed.status, 0, removed.stdout + removed.stderr);
    assert.ok(!existsSync('/usr/bin/palisade-agent'));
    assert.ok(existsSync('/etc/palisade-agent/agent.conf'), 'remove keeps the config');
    const purged = spawnSync('dpkg', ['--purge', 'palisade-agent'], { encoding: 'utf8' });
    assert.equal(purged.status, 0, purged.stdout + purged.stderr);
    assert.ok(!existsSync('/etc/palisade-agent'), 'purge removes the config');
    assert.ok(!existsSync('/var/lib/palisade-agent'), 'purge removes the state');
    assert.notEqual(spawnSync('getent', ['passwd', USER]).status, 0, 'purge removes the user');
  });

  test("re-installing the .deb never follows a link the agent's user planted at agent.conf", async () => {
    const first = spawnSync('dpkg', ['--install', DEB], { encoding: 'utf8' });
    assert.equal(first.status, 0, first.stdout + first.stderr);
    const uid = Number(sh('id', ['-u', USER]).trim());
    // A stand-in for /etc/shadow: root's, 0640, in a directory everyone may enter.
    const dir = tempDir('palisade-victim-');
    dirs.push(dir);
    chmodSync(dir.path, 0o755);
    const victim = join(dir.path, 'shadow');
    writeFileSync(victim, 'root:$6$secret:19000:0:99999:7:::\n');
    chmodSync(victim, 0o640);
    // The agent's user owns /etc/palisade-agent (POST /config rewrites agent.conf there): it swaps in a link.
    const planted = spawnSync(
      'setpriv',
      [`--reuid=${USER}`, `--regid=${USER}`, '--init-groups', 'ln', '-sfn', victim, '/etc/palisade-agent/agent.conf'],
      { encoding: 'utf8' },
    );
    assert.equal(planted.status, 0, planted.stderr);
    assert.ok(lstatSync('/etc/palisade-agent/agent.conf').isSymbolicLink());

    // Re-running the install line re-installs the package: preinst, unpack, postinst configure.
    const again = spawnSync('dpkg', ['--install', DEB], { encoding: 'utf8' });
    const after = statSync(victim);
    assert.deepEqual(
      [after.uid, after.gid, (after.mode & 0o7777).toString(8)],
      [0, 0, '640'],
      `the victim keeps owner root and its mode:\n${again.stdout}${again.stderr}`,
    );
    assert.equal(readFileSync(victim, 'utf8'), 'root:$6$secret:19000:0:99999:7:::\n');
    assert.notEqual(again.status, 0, 'dpkg reports the refusal');
    assert.match(again.stderr, /agent\.conf is not a regular file with one name/);
    // Root keeps the directory until someone looks: the agent's user can change nothing in it now.
    assert.equal(statSync('/etc/palisade-agent').uid, 0);
    assert.ok(lstatSync('/etc/palisade-agent/agent.conf').isSymbolicLink(), 'left as it was found');

    // Removed, the next install goes through and the agent's user gets a config and its directory back.
    sh('rm', ['/etc/palisade-agent/agent.conf']);
    const fixed = spawnSync('dpkg', ['--install', DEB], { encoding: 'utf8' });
    assert.equal(fixed.status, 0, fixed.stdout + fixed.stderr);
    for (const [path, mode] of [
      ['/etc/palisade-agent', 0o700],
      ['/etc/palisade-agent/agent.conf', 0o600],
      ['/var/lib/palisade-agent', 0o700],
    ] as const) {
      const s = lstatSync(path);
      assert.deepEqual([s.uid, (s.mode & 0o7777).toString(8)], [uid, mode.toString(8)], path);
    }
    assert.equal(statSync(victim).uid, 0);
    const purged = spawnSync('dpkg', ['--purge', 'palisade-agent'], { encoding: 'utf8' });
    assert.equal(purged.status, 0, purged.stdout + purged.stderr);
  });

  test('the console and CLI tarballs install with npm install -g; their bins work, the console serves the dashboard', async () => {
    const dir = tempDir('palisade-npm-');
    dirs.push(dir);
    // --ignore-scripts: better-sqlite3's native build (about 2 minutes here) is not what this tests;
    // the console runs on PostgreSQL below and the CLI does not load it (docs/decisions.md, "Packaging").
    const install = spawnSync(
      'npm',
      [
        'install',
        '--global',
        '--prefix',
        dir.path,
        '--prefer-offline',
        '--ignore-scripts',
        '--no-audit',
        '--no-fund',
        join(OUT, `palisade-console-${VERSION}.tgz`),
        join(OUT, `palisade-sdk-${VERSION}.tgz`),
      ],
      { encoding: 'utf8', cwd: dir.path },
    );
    assert.equal(install.status, 0, install.stdout + install.stderr);
    const env = { PATH: `${join(dir.path, 'bin')}:${process.env.PATH}`, HOME: dir.path };
    const consoleHelp = spawnSync(join(dir.path, 'bin/palisade-console'), ['--help'], { env, encoding: 'utf8' });
    assert.equal(consoleHelp.status, 0, consoleHelp.stderr);
    assert.match(consoleHelp.stdout, /Usage: palisade-console/);
    const cliHelp = spawnSync(join(dir.path, 'bin/palisade'), ['--help'], { env, encoding: 'utf8' });
    assert.equal(cliHelp.status, 0, cliHelp.stderr);
    assert.match(cliHelp.stdout, /palisade: the Palisade console/);
    const consoleDir = join(dir.path, 'lib/node_modules/@palisade/console');
    assert.ok(existsSync(join(consoleDir, 'web/index.html')), 'the dashboard travels with the console');
    assert.ok(existsSync(join(consoleDir, 'node_modules/@palisade/protocol/dist/src/index.js')));

    // The console as installed from the tarball, on PostgreSQL (its SQLite driver was not built).
    const served = await startConsoleProcess(
      {
        PATH: env.PATH,
        PALISADE_DATABASE_URL: PG_URL!,
        PALISADE_DATABASE_SCHEMA: PG_SCHEMA,
        PALISADE_DATA_DIR: join(dir.path, 'data'),
      },
      [],
      join(dir.path, 'bin/palisade-console'),
    );
    try {
      const page = await fetch(`${served.url}/dashboard`);
      const html = await page.text();
      assert.equal(page.status, 200);
      const script = /src="(\/assets\/[^"]+\.js)"/.exec(html)?.[1];
      assert.ok(script, html);
      assert.equal((await fetch(`${served.url}${script}`)).status, 200);
    } finally {
      await served.kill();
      const client = new pg.Client({ connectionString: PG_URL });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS "${PG_SCHEMA}" CASCADE`);
      await client.end();
    }
  });
});
