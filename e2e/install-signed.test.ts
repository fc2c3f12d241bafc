// Signed releases (docs/agent.md, "Signed releases"), with real processes: the packaged artifacts
// copied and their SHA256SUMS signed with this test's own release key (made by `palisade-console
// release-key new`), a console serving them, and the install line it shows (which pins the key)
// run in a network namespace as on a fresh server. A tampered SHA256SUMS re-signed with another key,
// or a flipped signature byte, is refused before anything is installed; once a key is pinned, a line
// with another key, or a console serving no signature, is refused and the installed agent is untouched.
// Needs Linux x64, root, dpkg, ip, setpriv, curl and openssl; skipped (as e2e/install.test.ts) otherwise.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash, createPrivateKey, generateKeyPairSync, sign } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { agentProcesses, installHostMissing, packageInstalled, serverNamespace } from './support/install-host.js';
import { packagedArtifacts } from './support/packages.js';
import {
  accountWithProduct,
  type ConsoleCall,
  type ConsoleProcess,
  eventually,
  holdDpkgLock,
  runConsoleCli,
  startConsoleProcess,
  tempDir,
} from './support/processes.js';

const PINNED = '/etc/palisade/release.pub';
const LOG = '/var/log/palisade-agent.log';
const server = serverNamespace('psg', 150);

const why = installHostMissing(['dpkg', 'ip', 'setpriv', 'curl', 'sha256sum', 'openssl']);
if (why && process.env.CI) {
  test('the signed install suite can run', () => assert.fail(`CI must run the signed install suite, but ${why}`));
}
const installed = packageInstalled;
const agents = () => agentProcesses();
const sha256 = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');
const base64Key = (pem: string | Buffer) =>
  Buffer.from(createPrivateKey(pem).export({ format: 'jwk' }).x!, 'base64url').toString('base64');

describe('signed releases: the install line pins the release key', { skip: why ? `skipped: ${why}` : false }, () => {
  const dir = tempDir('palisade-signed-');
  let releaseLock = () => {};
  let consoleProc: ConsoleProcess;
  /** An account with a product on each console (each has its own database). */
  const accounts = new Map<string, { productId: number; call: ConsoleCall }>();
  let releaseKey = '';
  let deb = '';
  const consoles: ConsoleProcess[] = [];

  /** A console serving `artifacts` (its own data directory). */
  const serve = async (artifacts: string) => {
    const c = await startConsoleProcess({
      PALISADE_DATA_DIR: join(dir.path, `data-${consoles.length}`),
      PALISADE_HOST: server.hostIp,
      PALISADE_ALLOW_PRIVATE_TARGETS: '1',
      PALISADE_BOOTSTRAP_ADMIN: '0',
      PALISADE_ARTIFACTS_DIR: artifacts,
    });
    consoles.push(c);
    return c;
  };
  /** A copy of the packaged .deb and SHA256SUMS in `name`, SHA256SUMS signed with `key` (PEM), or unsigned. */
  const artifactsDir = (name: string, key: string | null, edit = (sums: string) => sums) => {
    const out = join(dir.path, name);
    mkdirSync(out, { recursive: true });
    copyFileSync(join(packagedArtifacts(), deb), join(out, deb));
    const sums = edit(readFileSync(join(packagedArtifacts(), 'SHA256SUMS'), 'utf8'));
    writeFileSync(join(out, 'SHA256SUMS'), sums);
    if (key !== null) {
      writeFileSync(join(out, 'SHA256SUMS.sig'), sign(null, Buffer.from(sums), createPrivateKey(key)));
      writeFileSync(join(out, 'release.pub'), `${base64Key(key)}\n`);
    }
    return out;
  };
  /** Runs the install line as pasted, in the namespace (a fresh server). */
  const runLine = (line: string) => {
    const res = spawnSync('ip', ['netns', 'exec', server.ns, 'sh', '-c', line], {
      encoding: 'utf8',
      cwd: dir.path,
      env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin' },
    });
    return { code: res.status, out: `${res.stdout}${res.stderr}`, stderr: res.stderr };
  };
  const newLine = async (c: ConsoleProcess) => {
    if (!accounts.has(c.url))
      accounts.set(c.url, await accountWithProduct(c.url, `signed-${accounts.size}@example.com`));
    const { call, productId } = accounts.get(c.url)!;
    const made = await call(c.url, 'POST', '/api/enrolment-tokens', { product_id: productId });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    return made.body.data as { token: string; root_command: string; release_key: string | null };
  };
  const cleanHost = () => {
    for (const pid of agents()) spawnSync('kill', [String(pid)]);
    spawnSync('dpkg', ['--purge', 'palisade-agent'], { stdio: 'ignore' });
    rmSync('/etc/palisade', { recursive: true, force: true });
    rmSync(LOG, { force: true });
  };

  before(async () => {
    releaseLock = await holdDpkgLock();
    const version = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version;
    deb = `palisade-agent_${version}_amd64.deb`;
    packagedArtifacts();
    assert.ok(!installed(), 'palisade-agent is already installed on this machine; purge it first');
    assert.ok(!existsSync(PINNED), `${PINNED} exists on this machine; remove it first`);
    server.create();
    // The release key, as an operator makes it: off the console, 0600.
    const keyFile = join(dir.path, 'release.key');
    const made = await runConsoleCli({}, ['release-key', 'new', '--out', keyFile]);
    assert.equal(made.code, 0, made.out);
    releaseKey = /Public key: (\S+)/.exec(made.out)![1]!;
    consoleProc = await serve(artifactsDir('signed', readFileSync(keyFile, 'utf8')));
  });

  after(async () => {
    cleanHost();
    server.remove();
    releaseLock();
    for (const c of consoles) await c.kill();
    dir.remove();
  });

  test('the console serves the signature and its line pins the release key', async () => {
    const line = await newLine(consoleProc);
    assert.equal(line.release_key, releaseKey);
    assert.ok(line.root_command.endsWith(` --token ${line.token} --release-key ${releaseKey}`), line.root_command);
    const sums = Buffer.from(await (await fetch(`${consoleProc.url}/install/SHA256SUMS`)).arrayBuffer());
    assert.deepEqual(sums, readFileSync(join(dir.path, 'signed/SHA256SUMS')), 'served byte for byte, as signed');
    const sig = await fetch(`${consoleProc.url}/install/SHA256SUMS.sig`);
    assert.equal(sig.status, 200);
    assert.equal((await sig.arrayBuffer()).byteLength, 64);
  });

  test('a tampered SHA256SUMS re-signed with another key, or a flipped signature byte, installs nothing', async () => {
    const attacker = generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }) as string;
    // The .deb's hash edited (a swapped package) and SHA256SUMS signed again, with a key not pinned.
    const resigned = artifactsDir('resigned', attacker, (sums) =>
      sums.replace(/^[0-9a-f]{64}(?= {2}palisade-agent_)/m, 'f'.repeat(64)),
    );
    const flippedDir = artifactsDir('flipped', null);
    const good = readFileSync(join(dir.path, 'signed/SHA256SUMS.sig'));
    good[20]! ^= 0x01;
    writeFileSync(join(flippedDir, 'SHA256SUMS.sig'), good);
    writeFileSync(join(flippedDir, 'release.pub'), `${releaseKey}\n`);
    for (const artifacts of [resigned, flippedDir]) {
      const c = await serve(artifacts);
      const { token } = await newLine(c);
      // The line as the genuine console shows it: the pinned key is the release key.
      const res = runLine(
        `curl -fsSL ${c.url}/install/agent.sh -o palisade-install.sh && sh palisade-install.sh --token ${token} --release-key ${releaseKey}`,
      );
      assert.equal(res.code, 1, res.out);
      assert.match(
        res.stderr,
        /SHA256SUMS from .* is not signed by the pinned release key .*: refused\. Nothing was changed\./,
      );
      assert.doesNotMatch(res.out, /SHA-256 verified|installing/);
      assert.ok(!installed() && !existsSync('/usr/bin/palisade-agent'), 'no package installed');
      assert.deepEqual(agents(), [], 'no agent running');
      assert.ok(!existsSync(PINNED) && !existsSync('/var/lib/palisade-agent'), 'nothing pinned, no state');
    }
  });

  test('a link planted at the pinned key is refused before anything is installed, and its target is untouched', async () => {
    const victim = join(dir.path, 'victim');
    writeFileSync(victim, 'root:secret\n', { mode: 0o600 });
    mkdirSync('/etc/palisade', { recursive: true });
    symlinkSync(victim, PINNED);
    try {
      const line = await newLine(consoleProc);
      const res = runLine(line.root_command);
      assert.equal(readFileSync(victim, 'utf8'), 'root:secret\n', `nothing written through the link:\n${res.out}`);
      assert.equal(res.code, 1, res.out);
      assert.match(res.stderr, /release\.pub is a symbolic link: the release key is never read or written through one/);
      assert.ok(!installed() && !existsSync('/var/lib/palisade-agent'), 'nothing installed');
    } finally {
      rmSync('/etc/palisade', { recursive: true, force: true });
    }
  });

  test('signed with the pinned key, the line installs, registers and pins the key for the agent', async () => {
    const line = await newLine(consoleProc);
    const res = runLine(line.root_command.replace(' --token', ' --connect outbound --token'));
    assert.equal(res.code, 0, res.out);
    assert.match(
      res.out,
      new RegExp(`SHA256SUMS signature verified \\(release key ${releaseKey.replace(/[+/]/g, '\\$&')}\\)`),
    );
    assert.match(res.out, /SHA-256 verified/);
    assert.match(res.out, /registered with .* \(server \d+\)/);
    assert.ok(installed());
    // Exactly its supervisor and the agent (no systemd here). An agent the line restarted may still be
    // on its way out for a moment, so the count is waited for; what ran instead is named if it never is.
    await eventually('the supervisor and the agent, and no other palisade-agent', () => {
      const pids = agents();
      if (pids.length === 2) return true;
      const command = (pid: number) => {
        try {
          return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim();
        } catch {
          return `${pid} (gone)`;
        }
      };
      throw new Error(`${pids.length} running: ${pids.map(command).join('; ')}\n${res.out}`);
    });
    const pinned = statSync(PINNED);
    assert.deepEqual([pinned.uid, (pinned.mode & 0o7777).toString(8), pinned.isFile()], [0, '644', true]);
    // The installed agent checks a release against the pinned key itself (its future updates will).
    const check = spawnSync(
      '/usr/bin/palisade-agent',
      [
        'verify-release',
        '--sums',
        join(dir.path, 'signed/SHA256SUMS'),
        '--sig',
        join(dir.path, 'signed/SHA256SUMS.sig'),
      ],
      { encoding: 'utf8' },
    );
    assert.equal(check.status, 0, check.stdout + check.stderr);
  });

  test('once pinned, another key on the line or an unsigned console is refused, and the agent is untouched', async () => {
    const before = { sha: sha256('/usr/bin/palisade-agent'), pids: agents(), pinned: readFileSync(PINNED, 'utf8') };
    const other = generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }) as string;
    const otherConsole = await serve(artifactsDir('other-key', other));
    const swapped = await newLine(otherConsole);
    assert.equal(swapped.release_key, base64Key(other));
    const res = runLine(swapped.root_command);
    assert.equal(res.code, 1, res.out);
    assert.match(res.stderr, /--release-key .* is not the release key this host pinned at its first install/);
    const unsigned = await serve(artifactsDir('unsigned', null));
    const plain = await newLine(unsigned);
    assert.equal(plain.release_key, null);
    assert.ok(!plain.root_command.includes('--release-key'));
    const res2 = runLine(plain.root_command);
    assert.equal(res2.code, 1, res2.out);
    assert.match(res2.stderr, /HTTP 404 for SHA256SUMS\.sig/);
    assert.deepEqual(
      { sha: sha256('/usr/bin/palisade-agent'), pids: agents(), pinned: readFileSync(PINNED, 'utf8') },
      before,
      'the same agent, still running, the same pinned key',
    );
  });
});
