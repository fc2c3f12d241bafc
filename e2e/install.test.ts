// The one-line install (docs/agent.md, "One-line install"), with real processes: a console serving
// dist/packages, an enrolment token made through its API, and `curl … /install/agent.sh | sh` run in
// a network namespace joined to this host by a veth pair, as on a fresh server: the script checks
// the SHA-256, installs the .deb with dpkg, starts the agent (no systemd here: in the background, as
// the package's user with CAP_NET_ADMIN) and registers it; the server then shows online with a
// sample. Also: each refused token (401 naming why), the server limit, a checksum mismatch and the
// script's refusals (root, Linux, x86_64), which must change nothing; and, with the agent's port
// dropped by nftables, the line's default registers it outbound and it goes online through its link.
// Needs Linux x64, root, dpkg, ip, nft, setpriv and curl; in CI a missing one fails.
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  lstatSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { assertMatchesOpenApi } from '@palisade/console/openapi-check';
import { closedPort, runToEnd } from '@palisade/testkit';
import { agentProcesses, installHostMissing, packageInstalled, serverNamespace } from './support/install-host.js';
import { packagedArtifacts } from './support/packages.js';
import {
  type ConsoleProcess,
  eventually,
  holdDpkgLock,
  runConsoleCli,
  startConsoleProcess,
  tempDir,
} from './support/processes.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const OUT = join(ROOT, 'dist/packages');
const VERSION: string = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version;
const DEB = `palisade-agent_${VERSION}_amd64.deb`;
const server = serverNamespace('pin', 200);
const { ns: NS, hostIp: HOST_IP, nsIp: NS_IP } = server;

const why = installHostMissing(['dpkg', 'ip', 'nft', 'setpriv', 'curl', 'sha256sum']);
if (why && process.env.CI) {
  test('the install suite can run', () => {
    assert.fail(`CI must run the install suite, but ${why}`);
  });
}

const sh = (cmd: string, args: string[]) =>
  execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
const LOG = '/var/log/palisade-agent.log';
/** The gid the log belongs to: adm where the group exists, else root. */
const logGid = () => {
  const adm = spawnSync('getent', ['group', 'adm'], { encoding: 'utf8' });
  return adm.status === 0 ? Number(adm.stdout.split(':')[2]) : 0;
};
/** Where the script installs the single executable where there is no dpkg (or with --exe). */
const EXE = '/usr/local/bin/palisade-agent';
const installed = packageInstalled;

/** The shown line for a root shell (the dashboard's `root_command`): saved to a file, run only when downloaded. */
const pasted = (consoleUrl: string, args: string) =>
  `curl -fsSL ${consoleUrl}/install/agent.sh -o palisade-install.sh && sh palisade-install.sh ${args}`;
/** Where the line saves the script (the operator's working directory). */
const lineDir = tempDir('palisade-install-line-');

/** Runs a shell line (the install line as pasted) here on the host, or inside the namespace. */
function runShell(line: string, env: Record<string, string> = {}, inNamespace = false) {
  const argv = inNamespace ? ['ip', 'netns', 'exec', NS, 'sh', '-c', line] : ['sh', '-c', line];
  const res = spawnSync(argv[0]!, argv.slice(1), {
    encoding: 'utf8',
    cwd: lineDir.path,
    env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin', ...env },
  });
  return { code: res.status, out: `${res.stdout}${res.stderr}`, stderr: res.stderr };
}

/** Runs the install line as an operator pastes it: here on the host, or inside the namespace. */
const runLine = (consoleUrl: string, args: string, env: Record<string, string> = {}, inNamespace = false) =>
  runShell(pasted(consoleUrl, args), env, inNamespace);

describe('the one-line install', { skip: why ? `skipped: ${why}` : false }, () => {
  const dir = tempDir('palisade-install-');
  const badDir = tempDir('palisade-install-bad-');
  let consoleProc: ConsoleProcess;
  let cookie = '';
  let bearer = '';
  let productId = 0;
  let smallProductId = 0;
  let usedToken = '';
  let agentPid = 0;
  let outboundServerId = 0;
  let releaseLock = () => {};

  async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
    const res = await fetch(`${consoleProc.url}${path}`, {
      method,
      headers: {
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...(cookie && !headers.authorization ? { cookie } : {}),
        ...headers,
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    // biome-ignore lint/suspicious/noExplicitAny: test answers are checked field by field
    const json: any = text ? JSON.parse(text) : null;
    if (json && !path.startsWith('/api/agent/')) assertMatchesOpenApi(path, res.status, json, method);
    return { status: res.status, body: json };
  }

  const newToken = async (product: number, extra: Record<string, unknown> = {}) => {
    const made = await call('POST', '/api/enrolment-tokens', { product_id: product, ...extra });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    return made.body.data as { id: number; token: string; command: string; root_command: string };
  };

  const stopBackgroundAgent = () => {
    // Its supervisor first: it would start the agent again (docs/agent.md, "The root updater").
    try {
      const supervisor = Number(readFileSync('/var/lib/palisade-agent/supervisor.pid', 'utf8').trim());
      if (supervisor > 0) spawnSync('kill', [String(supervisor)]);
    } catch {}
    try {
      agentPid = Number(readFileSync('/var/lib/palisade-agent/agent.pid', 'utf8').trim()) || agentPid;
    } catch {}
    if (agentPid > 0) spawnSync('kill', [String(agentPid)]);
  };
  const removeNamespace = server.remove;
  const purge = () => spawnSync('dpkg', ['--purge', 'palisade-agent'], { stdio: 'ignore' });

  before(async () => {
    releaseLock = await holdDpkgLock();
    packagedArtifacts(); // built once for both suites (e2e/support/packages.ts)
    assert.ok(!installed(), 'palisade-agent is already installed on this machine; purge it first');
    // The "server": a namespace reaching the console through a veth pair, as over a network.
    server.create();

    consoleProc = await startConsoleProcess({
      PALISADE_DATA_DIR: dir.path,
      PALISADE_HOST: HOST_IP,
      PALISADE_ALLOW_PRIVATE_TARGETS: '1',
      PALISADE_BOOTSTRAP_ADMIN: '0',
      PALISADE_CHECKIN_INTERVAL_S: '5',
      PALISADE_ARTIFACTS_DIR: OUT,
    });
    const signUp = await fetch(`${consoleProc.url}/api/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: `install-${process.pid}@example.com`, password: 'install-password', name: 'ops' }),
    });
    assert.equal(signUp.status, 201);
    cookie = signUp.headers.get('set-cookie')!.split(';')[0]!;
    bearer = (await call('POST', '/api/tokens', { name: 'e2e' })).body.data.token;
    productId = (await call('POST', '/api/products', { catalog_id: 1 })).body.data.product.id;
    // A plan for one server, for the limit (paid: an account holds one free plan at a time).
    const added = await runConsoleCli({ PALISADE_DATA_DIR: dir.path }, [
      'admin',
      'catalog',
      'add',
      '--sku',
      `one-${process.pid}`,
      '--name',
      'One',
      '--price-cents',
      '100',
      '--server-limit',
      '1',
    ]);
    assert.equal(added.code, 0, added.out);
    const catalogId = Number(/Catalog item (\d+)/.exec(added.out)?.[1]);
    smallProductId = (await call('POST', '/api/products', { catalog_id: catalogId })).body.data.product.id;
  });

  after(async () => {
    stopBackgroundAgent();
    for (const pid of agentProcesses(EXE)) spawnSync('kill', [String(pid)]);
    rmSync(EXE, { force: true });
    removeNamespace();
    purge();
    releaseLock();
    rmSync(LOG, { force: true });
    await consoleProc?.kill();
    dir.remove();
    badDir.remove();
    lineDir.remove();
  });

  test('the console serves the script with its address, SHA256SUMS and the allow-listed artifacts only', async () => {
    const script = await fetch(`${consoleProc.url}/install/agent.sh`);
    assert.equal(script.status, 200);
    const text = await script.text();
    assert.ok(text.startsWith('#!/bin/sh\n'));
    assert.ok(text.includes(`CONSOLE='${consoleProc.url}'`), 'the console fills in its own address');
    assert.ok(text.includes(`VERSION='${VERSION}'`));
    const sums = await (await fetch(`${consoleProc.url}/install/SHA256SUMS`)).text();
    assert.match(sums, new RegExp(`^[0-9a-f]{64}  ${DEB.replace(/\./g, '\\.')}$`, 'm'));
    assert.ok(!sums.includes('palisade-console-'), 'only what the script installs');
    const deb = await fetch(`${consoleProc.url}/install/${DEB}`);
    assert.equal(deb.status, 200);
    assert.equal(Number(deb.headers.get('content-length')), readFileSync(join(OUT, DEB)).length);
    await deb.arrayBuffer();
    for (const path of [
      'SHA256SUMS.bak',
      `palisade-console-${VERSION}.tgz`,
      '..%2Fpackage.json',
      '%2e%2e%2fSHA256SUMS',
    ]) {
      const res = await fetch(`${consoleProc.url}/install/${path}`);
      assert.equal(res.status, 404, path);
      await res.text();
    }
  });

  test("without artifacts the line fails, printing the console's 503 saying to run npm run package", async () => {
    const bare = await startConsoleProcess({
      PALISADE_DATA_DIR: join(badDir.path, 'data-bare'),
      PALISADE_ARTIFACTS_DIR: join(badDir.path, 'nothing-here'),
    });
    try {
      const sums = await fetch(`${bare.url}/install/SHA256SUMS`);
      assert.equal(sums.status, 503);
      assert.match(await sums.text(), /npm run package/);
      // (this console listens on 127.0.0.1: the line runs on the host, and stops before changing anything)
      const res = runLine(bare.url, `--token enr_${'A'.repeat(38)}`);
      assert.equal(res.code, 1, res.out);
      assert.match(res.stderr, /the console answered HTTP 503 for SHA256SUMS:\nThis console has no agent packages/);
      assert.match(res.stderr, /run `npm run package`/);
      assert.match(res.stderr, /Nothing was changed/);
      assert.ok(!installed() && !existsSync('/var/lib/palisade-agent'), 'nothing installed');
    } finally {
      await bare.kill();
    }
  });

  test('the line fails when the console is down: nothing runs, and its exit says so', async () => {
    const { root_command } = await newToken(productId);
    const down = `http://${HOST_IP}:${await closedPort()}`;
    const res = runShell(root_command.replace(consoleProc.url, down), {}, true);
    assert.equal(res.code, 7, `curl's "could not connect" is the line's exit, not 0:\n${res.out}`);
    assert.match(res.stderr, /curl: \(7\)/);
    assert.ok(!installed() && !existsSync('/var/lib/palisade-agent'), 'nothing installed');
  });

  test('the script refuses a musl host (Alpine) and changes nothing', async () => {
    // musl's ldd, bind-mounted over glibc's in the line's own mount namespace (ip netns exec makes one).
    const fakeLdd = join(badDir.path, 'ldd');
    writeFileSync(fakeLdd, "#!/bin/sh\necho 'musl libc (x86_64)' >&2\necho 'Version 1.2.4' >&2\nexit 1\n", {
      mode: 0o755,
    });
    const ldd = execFileSync('sh', ['-c', 'command -v ldd'], { encoding: 'utf8' }).trim();
    const { token } = await newToken(productId);
    const res = runShell(`mount --bind ${fakeLdd} ${ldd} && ${pasted(consoleProc.url, `--token ${token}`)}`, {}, true);
    assert.equal(res.code, 1, res.out);
    assert.match(res.stderr, /C library is musl \(Alpine or similar\); the agent is built for glibc 2\.28 or newer/);
    assert.match(res.stderr, /Nothing was changed/);
    assert.ok(!installed() && !existsSync('/var/lib/palisade-agent'), 'nothing installed');
  });

  test('port 9740 taken: the line says address already in use at once, no token advice, token unused', async () => {
    // Another program on the agent's port, in the server's namespace.
    const squatter = spawn(
      'ip',
      [
        'netns',
        'exec',
        NS,
        process.execPath,
        '-e',
        "require('node:net').createServer().listen(9740, '0.0.0.0', () => console.log('listening'))",
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    try {
      await new Promise<void>((resolve, reject) => {
        squatter.stdout!.once('data', () => resolve());
        squatter.once('exit', () => reject(new Error('the listener on 9740 stopped')));
      });
      const created = await newToken(productId);
      const res = runLine(consoleProc.url, `--token ${created.token}`, {}, true);
      assert.equal(res.code, 1, res.out);
      assert.match(res.stderr, /the agent could not start: address already in use \(.*0\.0\.0\.0:9740/);
      assert.doesNotMatch(res.out, /new token|is installed and running|registered with/, res.out);
      assert.match(res.stderr, /the token was not used/);
      // The script saw the agent stop; on a loaded machine its process may still be on its way out.
      await eventually('no agent left running', async () => (agentProcesses().length === 0 ? true : undefined));
      const listed = (await call('GET', '/api/enrolment-tokens')).body.data.tokens.find(
        (x: { id: number }) => x.id === created.id,
      );
      assert.equal(listed.uses, 0, 'the token is still good');
    } finally {
      squatter.kill();
      for (const pid of agentProcesses()) spawnSync('kill', [String(pid)]);
      purge();
      rmSync(LOG, { force: true });
    }
  });

  test('the script refuses without root, on another OS or CPU, and changes nothing', async () => {
    const { token } = await newToken(productId);
    const cases: [Record<string, string>, RegExp][] = [
      [{ PALISADE_INSTALL_UID: '1000' }, /run as root/],
      [{ PALISADE_INSTALL_UNAME_S: 'Darwin' }, /runs Darwin; the agent runs on Linux only/],
      [{ PALISADE_INSTALL_UNAME_M: 'aarch64' }, /CPU is aarch64; the agent is built for x86_64/],
    ];
    for (const [env, message] of cases) {
      const res = runLine(consoleProc.url, `--token ${token}`, env);
      assert.equal(res.code, 1, res.out);
      assert.match(res.stderr, message);
      assert.match(res.stderr, /Nothing was changed/);
      assert.ok(!installed() && !existsSync('/var/lib/palisade-agent'), 'nothing installed');
    }
    // --protect: letters, digits and commas, each a service the shipped patterns protect.
    const protects: [string, RegExp][] = [
      [
        "'sshd;reboot'",
        /--protect: expected auto or service names separated by commas \(sshd,nginx,apache,postfix,dovecot\)/,
      ],
      ['sshd,ftp', /--protect: unknown service ftp; expected auto or names from sshd,nginx,apache,postfix,dovecot/],
    ];
    for (const [value, message] of protects) {
      const res = runLine(consoleProc.url, `--token ${token} --protect ${value}`);
      assert.equal(res.code, 1, res.out);
      assert.match(res.stderr, message);
      assert.match(res.stderr, /Nothing was changed/);
      assert.ok(!installed() && !existsSync('/var/lib/palisade-agent'), 'nothing installed');
    }
  });

  test('a checksum mismatch stops before anything is installed', async () => {
    // A console whose SHA256SUMS does not match its .deb (a corrupted mirror, a tampered file).
    const artifacts = join(badDir.path, 'artifacts');
    sh('mkdir', ['-p', artifacts]);
    copyFileSync(join(OUT, DEB), join(artifacts, DEB));
    writeFileSync(join(artifacts, 'SHA256SUMS'), `${'0'.repeat(64)}  ${DEB}\n`);
    const tampered = await startConsoleProcess({
      PALISADE_DATA_DIR: join(badDir.path, 'data'),
      PALISADE_ARTIFACTS_DIR: artifacts,
    });
    try {
      const { token } = await newToken(productId);
      const res = runLine(tampered.url, `--token ${token}`);
      assert.equal(res.code, 1, res.out);
      assert.match(res.stderr, /checksum mismatch for palisade-agent_.*SHA256SUMS says 0{64}/);
      assert.ok(!installed() && !existsSync('/usr/bin/palisade-agent') && !existsSync('/var/lib/palisade-agent'));
    } finally {
      await tampered.kill();
    }
  });

  test('a link planted at the log is refused before anything is installed, and its target is untouched', async () => {
    // A stand-in for a file only root may change (/etc/shadow), and the link someone planted at the log.
    const victim = join(badDir.path, 'victim');
    writeFileSync(victim, 'root:secret\n', { mode: 0o600 });
    chmodSync(victim, 0o600);
    rmSync(LOG, { force: true });
    symlinkSync(victim, LOG);
    try {
      const { token } = await newToken(productId);
      const res = runLine(consoleProc.url, `--token ${token}`, {}, true);
      const after = statSync(victim);
      assert.equal(readFileSync(victim, 'utf8'), 'root:secret\n', `nothing written through the link:\n${res.out}`);
      assert.deepEqual([after.uid, (after.mode & 0o7777).toString(8)], [0, '600']);
      assert.equal(res.code, 1, res.out);
      assert.match(res.stderr, /palisade-agent\.log is not a regular file with one name .*Nothing was changed/);
      assert.ok(!installed() && !existsSync('/var/lib/palisade-agent'), 'nothing installed');
      assert.ok(lstatSync(LOG).isSymbolicLink(), 'the link is left for the operator to look at');
    } finally {
      rmSync(LOG, { force: true });
    }
  });

  test('a refused registration on a fresh server leaves no agent running and no key', async () => {
    const revoked = await newToken(productId);
    assert.equal((await call('DELETE', `/api/enrolment-tokens/${revoked.id}`)).status, 200);
    try {
      const res = runLine(consoleProc.url, `--token ${revoked.token}`, {}, true);
      assert.deepEqual(agentProcesses(), [], `no agent left running:\n${res.out}`);
      assert.ok(!existsSync('/var/lib/palisade-agent/agent-key.json'), 'the first-start key is removed');
      assert.equal(res.code, 1, res.out);
      assert.match(res.stderr, /HTTP 401/);
      assert.match(res.stderr, /the agent was stopped again and its key removed: nothing listens on its port/);
      assert.equal((statSync(LOG).mode & 0o7777).toString(8), '640');
    } finally {
      for (const pid of agentProcesses()) spawnSync('kill', [String(pid)]);
      await eventually('no agent left', async () => (agentProcesses().length === 0 ? true : undefined));
      purge();
      rmSync(LOG, { force: true });
    }
  });

  test('pasting the line on a fresh server installs, registers, and the server is online with metrics', async (t) => {
    const created = await newToken(productId);
    assert.equal(created.root_command, pasted(consoleProc.url, `--token ${created.token}`));
    assert.equal(created.command, created.root_command.replace('&& sh ', '&& sudo sh '), 'the sudo form');
    usedToken = created.token;
    const started = Date.now();
    // The root shell's form as shown (this namespace has no sudo, as many root-only hosts).
    const res = runShell(created.root_command, {}, true);
    assert.equal(res.code, 0, res.out);
    assert.match(res.stderr, /warning: http:\/\/.* is plain HTTP/);
    assert.match(res.out, /started `\/usr\/bin\/palisade-agent supervise` in the background .*; it restarts the agent/);
    assert.match(res.out, /nothing starts it at boot/);
    assert.match(res.out, /log patterns read \/var\/log\/auth\.log and most logs only in the adm group/);
    assert.match(res.out, /SHA-256 verified/);
    assert.match(res.out, /registered with .* \(server \d+\)/);
    assert.match(res.out, new RegExp(`reaches this agent at http://${NS_IP.replace(/\./g, '\\.')}:9740`));
    // The fleet page's list (session cookie: the v1 list is limited to 120 requests a minute per token),
    // then the server's own answer, which carries the latest sample.
    const server = await eventually('the server online with a sample', async () => {
      const list = await call('GET', '/api/servers');
      if (list.status !== 200) throw new Error(`${list.status} ${JSON.stringify(list.body)}`);
      const listed = list.body.data.servers[0];
      if (!listed?.online) return undefined;
      const detail = await call('GET', `/api/servers/${listed.id}`);
      return detail.body.data.server.latest_sample ? detail.body.data.server : undefined;
    });
    const seconds = (Date.now() - started) / 1000;
    t.diagnostic(
      `pasting the line to online: ${seconds.toFixed(1)} s (script: ${/done in (\d+) s/.exec(res.out)?.[1]} s)`,
    );
    console.log(`install: pasting the line to online with a sample took ${seconds.toFixed(1)} s`);
    assert.ok(server.latest_sample.mem_used_mb > 0);
    assert.equal(server.agent_outdated, false);
    const v1 = await call('GET', '/api/v1/servers', undefined, { authorization: `Bearer ${bearer}` });
    assert.deepEqual(
      v1.body.data.servers.map((x: { id: number; online: boolean }) => [x.id, x.online]),
      [[server.id, true]],
    );
    const detail = await call('GET', `/api/servers/${server.id}`);
    assert.equal(detail.body.data.server.enrolled, true);
    assert.equal(detail.body.data.server.agent_version, VERSION);
    assert.equal(detail.body.data.server.product_id, productId);
    // The console reaches the installed agent through the proxy: the key it registered works.
    const metrics = await call('GET', `/api/servers/${server.id}/metrics`);
    assert.equal(metrics.status, 200);
    assert.equal(metrics.body.agent.version, VERSION);
    // It runs as the package's user with CAP_NET_ADMIN only, as the unit would run it.
    agentPid = Number(readFileSync('/var/lib/palisade-agent/agent.pid', 'utf8').trim());
    const status = readFileSync(`/proc/${agentPid}/status`, 'utf8');
    assert.match(status, /^CapEff:\s+0000000000001000$/m);
    // Its output goes to a log only root and the adm group read.
    const log = lstatSync(LOG);
    assert.ok(log.isFile(), 'a regular file');
    assert.deepEqual([(log.mode & 0o7777).toString(8), log.uid, log.gid], ['640', 0, logGid()]);
    const tokens = await call('GET', '/api/enrolment-tokens');
    const listed = tokens.body.data.tokens.find((x: { id: number }) => x.id === created.id);
    assert.deepEqual([listed.uses, listed.max_uses, listed.state], [1, 1, 'used_up']);
  });

  test('re-running the line upgrades in place: same key, same registration, same server', async () => {
    const keyBefore = readFileSync('/var/lib/palisade-agent/agent-key.json', 'utf8');
    const enrolmentBefore = readFileSync('/var/lib/palisade-agent/enrolment.json', 'utf8');
    chmodSync(LOG, 0o644); // as the line left it before it made the log 0640
    const res = runLine(consoleProc.url, '', {}, true);
    assert.equal(res.code, 0, res.out);
    assert.match(res.out, /upgraded; the agent keeps its registration/);
    assert.equal((statSync(LOG).mode & 0o7777).toString(8), '640', 'an older, wider log is narrowed');
    assert.equal(readFileSync('/var/lib/palisade-agent/agent-key.json', 'utf8'), keyBefore);
    assert.equal(readFileSync('/var/lib/palisade-agent/enrolment.json', 'utf8'), enrolmentBefore);
    const list = await call('GET', '/api/v1/servers', undefined, { authorization: `Bearer ${bearer}` });
    assert.equal(list.body.data.servers.length, 1);
    await eventually('the upgraded agent checking in', async () => {
      const s = (await call('GET', '/api/servers')).body.data.servers[0];
      return s.online && s.last_seen > Date.now() - 4000 ? s : undefined;
    });
  });

  test('--protect sshd writes protection.protect and the agent enables the sshd pattern; a re-run replaces the value', async () => {
    const serverId = (await call('GET', '/api/servers')).body.data.servers[0].id as number;
    const patterns = async () => {
      const res = await call('GET', `/api/servers/${serverId}/control?path=block-pattern`);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return res.body as {
        patterns: { name: string; source: string }[];
        services: { service: string; found: string | null; enabled: boolean }[];
      };
    };
    const conf = '/etc/palisade-agent/agent.conf';
    const res = runLine(consoleProc.url, '--protect sshd', {}, true);
    assert.equal(res.code, 0, res.out);
    assert.match(res.out, /protection\.protect = sshd written to \/etc\/palisade-agent\/agent\.conf/);
    assert.match(readFileSync(conf, 'utf8'), /^protection\.protect = sshd$/m);
    const sshd = await eventually('the sshd pattern enabled', async () => {
      const answer = await patterns().catch(() => undefined);
      return answer?.patterns.find((p) => p.name === 'sshd') ? answer : undefined;
    });
    assert.equal(sshd.patterns.find((p) => p.name === 'sshd')?.source, 'auto');
    assert.deepEqual(
      sshd.services.find((s) => s.service === 'sshd'),
      { service: 'sshd', patterns: ['sshd'], found: '/usr/sbin/sshd', enabled: true },
      'this host has openssh-server',
    );
    // Run again with another value: the one line is replaced, the file stays the agent's, 0600.
    const again = runLine(consoleProc.url, '--protect auto', {}, true);
    assert.equal(again.code, 0, again.out);
    const text = readFileSync(conf, 'utf8');
    assert.deepEqual(text.match(/^protection\.protect = .*$/gm), ['protection.protect = auto']);
    const st = statSync(conf);
    const agentUid = Number(spawnSync('id', ['-u', 'palisade-agent'], { encoding: 'utf8' }).stdout.trim());
    assert.deepEqual([(st.mode & 0o7777).toString(8), st.uid], ['600', agentUid]);
    assert.equal(statSync('/etc/palisade-agent').uid, agentUid, 'the directory is handed back');
    await eventually(
      'the upgraded agent answering',
      async () => (await patterns().catch(() => undefined)) ?? undefined,
    );
  });

  test('the installed agent passes the agent tests that use a real daemon', async (t) => {
    // The same files `npm test` runs against dist/src/cli.js, here against /usr/bin/palisade-agent as
    // the line installed it (packages/agent/test/agent-process.ts reads PALISADE_TEST_AGENT_BIN).
    const files = [
      'addresses',
      'body-limit',
      'cli',
      'config-api',
      'daemon-alerter',
      'daemon-api',
      'daemon-reload',
      'pattern-safety',
      'protection-api',
      'protection-netns',
    ].map((name) => fileURLToPath(new URL(`../../packages/agent/dist/test/${name}.test.js`, import.meta.url)));
    const run = await runToEnd(process.execPath, ['--test', '--test-reporter=tap', '--test-concurrency=2', ...files], {
      // Without NODE_TEST_CONTEXT the child is a test run of its own, not a part of this one.
      env: { ...process.env, NODE_TEST_CONTEXT: undefined, PALISADE_TEST_AGENT_BIN: '/usr/bin/palisade-agent' },
    });
    const summary = /^# tests (\d+)[\s\S]*?^# pass (\d+)[\s\S]*?^# fail (\d+)/m.exec(run.stdout);
    t.diagnostic(`installed agent: ${summary?.[2]} of ${summary?.[1]} real-daemon tests pass`);
    assert.equal(
      run.code,
      0,
      run.stdout
        .split('\n')
        .filter((l) => /not ok|error|Error/.test(l))
        .join('\n'),
    );
    assert.ok(summary && Number(summary[1]) > 30 && summary[3] === '0', run.stdout.slice(-400));
  });

  test('refused tokens: 401 naming unknown, used up, revoked or expired', async () => {
    const register = (token: string) => call('POST', '/api/agent/register', {}, { authorization: `Bearer ${token}` });
    const unknown = await register(`enr_${'A'.repeat(38)}`);
    assert.equal(unknown.status, 401);
    assert.match(unknown.body.error, /^enrolment token unknown/);
    assert.equal(unknown.body.reason, 'unknown');
    const none = await call('POST', '/api/agent/register', {});
    assert.equal(none.body.reason, 'unknown');

    const used = await register(usedToken);
    assert.deepEqual([used.status, used.body.reason], [401, 'used_up']);
    assert.match(used.body.error, /^enrolment token used up/);

    const revokedToken = await newToken(productId, { max_uses: 10 });
    assert.equal((await call('DELETE', `/api/enrolment-tokens/${revokedToken.id}`)).status, 200);
    const revoked = await register(revokedToken.token);
    assert.deepEqual([revoked.status, revoked.body.reason], [401, 'revoked']);

    const soon = await newToken(productId, { expires_at: Date.now() + 300 });
    const expired = await eventually('the token to expire', async () => {
      const r = await register(soon.token);
      return r.body.reason === 'expired' ? r : undefined;
    });
    assert.equal(expired.status, 401);
    assert.match(expired.body.error, /^enrolment token expired/);
    // A good token with a bad body: 400 naming the field, only after the token was accepted.
    const good = await newToken(productId);
    const bad = await register(good.token);
    assert.equal(bad.status, 400);
    assert.match(bad.body.error, /name/);
  });

  test('a product at its server limit refuses like the form, and the token is not used', async () => {
    const first = await newToken(smallProductId);
    // The namespace's agent registers again (--force) into the one-server plan: that fills it.
    const register = (token: string) =>
      spawnSync(
        'ip',
        [
          'netns',
          'exec',
          NS,
          '/usr/bin/palisade-agent',
          'register',
          '--force',
          '--console',
          consoleProc.url,
          '--token',
          token,
        ],
        { encoding: 'utf8' },
      );
    const ok = register(first.token);
    assert.equal(ok.status, 0, ok.stdout + ok.stderr);
    const second = await newToken(smallProductId, { max_uses: 5 });
    const full = register(second.token);
    assert.equal(full.status, 1);
    assert.match(full.stderr, /refused the registration \(HTTP 409\): product_id: the One plan allows 1 servers/);
    const listed = (await call('GET', '/api/enrolment-tokens')).body.data.tokens.find(
      (x: { id: number }) => x.id === second.id,
    );
    assert.equal(listed.uses, 0);
  });

  test('behind a firewall the line registers the agent outbound, and it goes online through its link', async (t) => {
    // A fresh server again (purged: key, enrolment and config gone) whose agent port nothing reaches.
    stopBackgroundAgent();
    await eventually('the old agent stopped', async () =>
      spawnSync('kill', ['-0', String(agentPid)], { stdio: 'ignore' }).status === 0 ? undefined : true,
    );
    purge();
    // agent.pid is the agent's user's to write: naming another process there must not get it killed by root.
    const bystander = spawn('sleep', ['600'], { stdio: 'ignore' });
    sh('mkdir', ['-p', '/var/lib/palisade-agent']);
    writeFileSync('/var/lib/palisade-agent/agent.pid', `${bystander.pid}\n`);
    chmodSync('/var/lib/palisade-agent/agent.pid', 0o666); // the new agent, as its user, writes its own pid there
    t.after(() => bystander.kill());
    execFileSync('ip', ['netns', 'exec', NS, 'nft', '-f', '-'], {
      input:
        'table inet palisade_install_test {\n  chain input { type filter hook input priority -10; policy accept; tcp dport 9740 drop; }\n}\n',
    });
    const created = await newToken(productId);
    const res = runLine(consoleProc.url, `--token ${created.token}`, {}, true);
    // (spawnSync held the event loop: a killed child is still a zombie, not yet an exit event)
    assert.match(
      readFileSync(`/proc/${bystander.pid}/status`, 'utf8'),
      /^State:\s+S/m,
      'root killed only a palisade-agent',
    );
    assert.equal(res.code, 0, res.out);
    assert.match(res.out, /the console cannot reach this agent: it keeps an outbound link to the console instead/);
    const serverId = Number(/\(server (\d+)\)/.exec(res.out)?.[1]);
    const server = await eventually('online through its link', async () => {
      const s = (await call('GET', `/api/servers/${serverId}`)).body.data.server;
      return s.state === 'online' && s.connection.link === 'up' ? s : undefined;
    });
    assert.equal(server.connection.mode, 'outbound');
    const metrics = await call('GET', `/api/servers/${serverId}/metrics`);
    assert.equal(metrics.status, 200, JSON.stringify(metrics.body));
    assert.equal(metrics.body.agent.version, VERSION);
    const enrolment = JSON.parse(readFileSync('/var/lib/palisade-agent/enrolment.json', 'utf8'));
    assert.equal(enrolment.connect, 'outbound', 'kept in the enrolment: the config file is not edited');
    outboundServerId = serverId;
  });

  /** Whether the agent's nftables table is in the server's namespace. */
  const hasTable = () =>
    spawnSync('ip', ['netns', 'exec', NS, 'nft', 'list', 'table', 'inet', 'palisade'], { stdio: 'ignore' }).status ===
    0;

  test('without systemd, dpkg -r stops the agent and removes its table, saying what is left; -P removes the user', async () => {
    assert.ok(outboundServerId > 0, 'the outbound test installed an agent');
    assert.ok(agentProcesses().length > 0 && hasTable(), 'an agent runs, with its nftables table');
    const removed = spawnSync('ip', ['netns', 'exec', NS, 'dpkg', '-r', 'palisade-agent'], { encoding: 'utf8' });
    const out = `${removed.stdout}${removed.stderr}`;
    assert.equal(removed.status, 0, out);
    assert.deepEqual(agentProcesses(), [], `no agent runs from the deleted executable:\n${out}`);
    assert.ok(!hasTable(), 'the nftables table is gone');
    assert.match(out, /stopped the agent \(pid \d+/);
    assert.match(out, /kept \/etc\/palisade-agent .* 'dpkg --purge palisade-agent' removes them/);
    const purged = spawnSync('ip', ['netns', 'exec', NS, 'dpkg', '-P', 'palisade-agent'], { encoding: 'utf8' });
    assert.equal(purged.status, 0, purged.stdout + purged.stderr);
    assert.doesNotMatch(purged.stderr, /user was kept/);
    assert.notEqual(spawnSync('getent', ['passwd', 'palisade-agent']).status, 0, 'the user is removed');
    assert.ok(!existsSync('/var/lib/palisade-agent') && !existsSync(LOG), 'state and log removed');
  });

  test('--uninstall --forget --purge removes the agent and its server in the console', async () => {
    const created = await newToken(productId);
    const res = runLine(consoleProc.url, `--token ${created.token} --connect outbound`, {}, true);
    assert.equal(res.code, 0, res.out);
    const serverId = Number(/\(server (\d+)\)/.exec(res.out)?.[1]);
    assert.equal((await call('GET', `/api/servers/${serverId}`)).status, 200);
    await eventually('the table made', async () => (hasTable() ? true : undefined));
    const gone = runShell('sh palisade-install.sh --uninstall --forget --purge', {}, true);
    assert.equal(gone.code, 0, gone.out);
    assert.match(gone.out, /removed this server from the console at /);
    assert.equal((await call('GET', `/api/servers/${serverId}`)).status, 404, 'the server is gone from the console');
    assert.deepEqual(agentProcesses(), [], gone.out);
    assert.ok(!hasTable(), 'the nftables table is gone');
    assert.ok(!installed() && !existsSync('/var/lib/palisade-agent'), 'package and state purged');
    // Its token went with the server: a second forget is a 401.
    const again = await call('DELETE', '/api/agent/server', undefined, { authorization: 'Bearer dmn_unknown' });
    assert.equal(again.status, 401);
  });

  test('palisade-agent uninstall --purge removes the single executable, and the table a killed agent left', async () => {
    const created = await newToken(productId);
    const res = runLine(consoleProc.url, `--token ${created.token} --connect outbound --exe`, {}, true);
    assert.equal(res.code, 0, res.out);
    assert.match(res.out, /installing the single executable as \/usr\/local\/bin\/palisade-agent/);
    assert.equal(agentProcesses(EXE).length, 2, `its supervisor and the agent:\n${res.out}`);
    await eventually('the table made', async () => (hasTable() ? true : undefined));
    // Killed (a crash, an OOM kill): it could not drop its table on the way out, as it does on TERM.
    for (const pid of agentProcesses(EXE)) spawnSync('kill', ['-9', String(pid)]);
    await eventually('the agent killed', async () => (agentProcesses(EXE).length === 0 ? true : undefined));
    assert.ok(hasTable(), 'a killed agent leaves its table');
    const gone = spawnSync('ip', ['netns', 'exec', NS, EXE, 'uninstall', '--purge'], { encoding: 'utf8' });
    const out = `${gone.stdout}${gone.stderr}`;
    assert.equal(gone.status, 0, out);
    assert.ok(!hasTable(), `the nftables table is gone:\n${out}`);
    assert.ok(!existsSync(EXE) && !existsSync('/var/lib/palisade-agent') && !existsSync('/etc/palisade-agent'));
    assert.match(
      out,
      /^removed its nftables table \(inet palisade\)\nremoved \/usr\/local\/bin\/palisade-agent\nremoved /,
    );
  });
});
