// The root updater (docs/agent.md, "The root updater"), as root without systemd: two real agent
// releases built and signed by scripts/package.mjs, the older one's single executable started as
// `palisade-agent supervise`, and update requests put in <state-dir>/update/ by hand as the agent
// leaves them. A good version is swapped in and kept once it checks in; one that crashes in a loop,
// or never checks in, is rolled back by the updater itself; a tampered signature or a link where a
// file belongs is refused with nothing changed.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash, createPrivateKey, generateKeyPairSync, sign } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { type Captured, rootSuite, runToEnd, spawnCaptured } from '@palisade/testkit';
import { parseUpdateRequest, sumFor } from '../src/update/apply-files.js';
import { eventually, keyFrom, request, tempDir, writeConfig } from './agent-process.js';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));

const sha256 = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');
const versionOf = (bin: string) => spawnSync(bin, ['--version'], { encoding: 'utf8' }).stdout.trim();

describe('the root updater under supervise', rootSuite('root updater', ['setpriv']), () => {
  const dir = tempDir('palisade-update-apply-');
  const keyFile = join(dir.path, 'release.key');
  const pubFile = join(dir.path, 'release.pub');
  const binDir = join(dir.path, 'bin');
  const bin = join(binDir, 'palisade-agent');
  const stateDir = join(dir.path, 'state');
  const updateDir = join(stateDir, 'update');
  const configFile = join(dir.path, 'agent.conf');
  const v1 = join(dir.path, 'v1');
  const v2 = join(dir.path, 'v2');
  const bad = join(dir.path, 'bad');
  let agentKey = '';
  let sup: Captured;
  let originalSum = '';

  /** A release dir whose SHA256SUMS lists `files` (already in it), signed with the test's key. */
  const signDir = (out: string) => {
    const sums = spawnSync('sh', ['-c', 'sha256sum palisade-agent-*'], { cwd: out, encoding: 'utf8' }).stdout;
    writeFileSync(join(out, 'SHA256SUMS'), sums);
    writeFileSync(join(out, 'SHA256SUMS.sig'), sign(null, Buffer.from(sums), createPrivateKey(readFileSync(keyFile))));
  };

  /** Puts the release's files and request.json in the update dir, as the agent does once it verified them. */
  const putRequest = (from: string, version: string, o: { timeout?: number; rollout?: number } = {}) => {
    rmSync(updateDir, { recursive: true, force: true });
    mkdirSync(updateDir, { mode: 0o700 });
    const artifact = `palisade-agent-${version}-linux-x64`;
    for (const f of ['SHA256SUMS', 'SHA256SUMS.sig', artifact]) copyFileSync(join(from, f), join(updateDir, f));
    const request = {
      rollout_id: o.rollout ?? 7,
      version,
      artifact,
      sha256: sha256(join(from, artifact)),
      health_timeout_s: o.timeout ?? 120,
      requested_at: Date.now(),
    };
    return { artifact, write: () => writeFileSync(join(updateDir, 'request.json'), JSON.stringify(request)) };
  };

  const result = () =>
    eventually(
      'result.json',
      () => {
        const file = join(updateDir, 'result.json');
        if (!existsSync(file)) return undefined;
        return JSON.parse(readFileSync(file, 'utf8')) as { rollout_id: number; state: string; reason: string | null };
      },
      180_000,
    );

  /** The agent's address from its latest "listening on" line after `offset` in the supervisor's output. */
  const listening = (offset: number) =>
    eventually(
      'the agent listening',
      () => {
        const all = [
          ...sup
            .output()
            .slice(offset)
            .matchAll(/palisade-agent listening on (https?:\/\/\S+)/g),
        ];
        return all.length > 0 ? all[all.length - 1]![1] : undefined;
      },
      60_000,
    );

  const health = async (url: string) => (await request(`${url}/health`, { key: agentKey })).json as { version: string };

  before(async () => {
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    writeFileSync(keyFile, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
    writeFileSync(pubFile, publicKey.export({ type: 'spki', format: 'pem' }));
    const build = (version: string, out: string) =>
      runToEnd(process.execPath, [
        join(ROOT, 'scripts/package.mjs'),
        '--agent-only',
        '--agent-version',
        version,
        '--sign-key',
        keyFile,
        '--out',
        out,
      ]);
    const built = await Promise.all([build('0.1.1', v1), build('0.1.2', v2)]);
    for (const b of built) assert.equal(b.code, 0, b.out);
    // A signed release that cannot run: it prints its version, and exits 1 for anything else.
    mkdirSync(bad);
    writeFileSync(
      join(bad, 'palisade-agent-0.1.3-linux-x64'),
      '#!/bin/sh\n[ "$1" = --version ] && { echo 0.1.3; exit 0; }\necho "cannot start" >&2\nexit 1\n',
      { mode: 0o755 },
    );
    signDir(bad);

    mkdirSync(binDir, { mode: 0o755 });
    copyFileSync(join(v1, 'palisade-agent-0.1.1-linux-x64'), bin);
    chmodSync(bin, 0o755);
    originalSum = sha256(bin);
    mkdirSync(stateDir, { mode: 0o700 });
    // No console: the agent runs unenrolled, monitor-only (parallel agents share no nftables table).
    writeConfig(configFile, {
      'metrics.listen': '127.0.0.1:0',
      'metrics.collector_timeout_ms': '10000',
      'protection.backend': 'monitor',
    });
    const made = await runToEnd(bin, ['key', '--config', configFile, '--state-dir', stateDir]);
    agentKey = keyFrom(made.stdout) ?? '';
    assert.ok(agentKey, made.out);
    sup = spawnCaptured(bin, [
      'supervise',
      '--config',
      configFile,
      '--state-dir',
      stateDir,
      '--user',
      'root',
      '--release-key-file',
      pubFile,
    ]);
    assert.equal((await health(await listening(0))).version, '0.1.1');
  });

  after(async () => {
    await sup?.stop();
    dir.remove();
  });

  test('a tampered signature, a bad field, a linked request or a linked artifact: failed, nothing changed', async () => {
    const before = sup.output().length;
    const cases: { name: string; setup: () => void; reason: RegExp; rollout: number }[] = [
      {
        name: 'tampered signature',
        rollout: 7,
        setup: () => {
          const r = putRequest(v2, '0.1.2');
          const sig = readFileSync(join(updateDir, 'SHA256SUMS.sig'));
          sig[0] = sig[0]! ^ 1;
          writeFileSync(join(updateDir, 'SHA256SUMS.sig'), sig);
          r.write();
        },
        reason: /not the pinned release key's signature of SHA256SUMS/,
      },
      {
        name: 'an artifact name outside the release',
        rollout: 7,
        setup: () => {
          putRequest(v2, '0.1.2').write();
          const file = join(updateDir, 'request.json');
          const r = JSON.parse(readFileSync(file, 'utf8'));
          writeFileSync(file, JSON.stringify({ ...r, artifact: '../bin/palisade-agent' }));
        },
        reason: /request\.json: artifact: expected palisade-agent-0\.1\.2-linux-x64 or/,
      },
      {
        name: 'request.json a link',
        rollout: 0,
        setup: () => {
          const r = putRequest(v2, '0.1.2');
          r.write();
          const real = join(dir.path, 'request-elsewhere.json');
          copyFileSync(join(updateDir, 'request.json'), real);
          rmSync(join(updateDir, 'request.json'));
          symlinkSync(real, join(updateDir, 'request.json'));
        },
        reason: /request\.json is a symbolic link: refused/,
      },
      {
        name: 'artifact a link',
        rollout: 7,
        setup: () => {
          const r = putRequest(v2, '0.1.2');
          rmSync(join(updateDir, r.artifact));
          symlinkSync(join(v2, r.artifact), join(updateDir, r.artifact));
          r.write();
        },
        reason: /palisade-agent-0\.1\.2-linux-x64 is a symbolic link: refused/,
      },
    ];
    for (const c of cases) {
      c.setup();
      const r = await result();
      assert.equal(r.state, 'failed', c.name);
      assert.equal(r.rollout_id, c.rollout, c.name);
      assert.match(r.reason ?? '', c.reason, c.name);
      assert.ok(!existsSync(join(updateDir, 'request.json')), `${c.name}: request.json removed`);
      assert.equal(sha256(bin), originalSum, `${c.name}: the executable is untouched`);
      assert.ok(!existsSync(`${bin}.prev`), `${c.name}: nothing was swapped`);
    }
    // The running agent was never stopped.
    assert.doesNotMatch(sup.output().slice(before), /started the agent/);
  });

  test('a version that exits at once is rolled back by itself, and the previous agent runs again', async () => {
    const offset = sup.output().length;
    putRequest(bad, '0.1.3').write();
    const r = await result();
    assert.equal(r.state, 'rolled_back', JSON.stringify(r));
    assert.match(r.reason ?? '', /palisade-agent 0\.1\.3 exited 3 times in 60 s \(last: exit code 1\)/);
    assert.equal(sha256(bin), originalSum, 'the previous executable is back');
    assert.equal(versionOf(bin), '0.1.1');
    assert.equal((await health(await listening(offset))).version, '0.1.1');
    assert.ok(!existsSync(join(updateDir, 'request.json')));
  });

  test('a good version is swapped in, kept once it checks in, and the previous one is kept as .prev', async () => {
    const offset = sup.output().length;
    putRequest(v2, '0.1.2').write();
    // No console here: the test writes checked-in.json, as the new agent does after its first check-in.
    await eventually('0.1.2 swapped in', () => (versionOf(bin) === '0.1.2' ? true : undefined), 60_000);
    const url = await listening(offset);
    assert.equal((await health(url)).version, '0.1.2');
    writeFileSync(join(updateDir, 'checked-in.json'), JSON.stringify({ version: '0.1.2', pid: 1, at: Date.now() }));
    const r = await result();
    assert.deepEqual(
      { state: r.state, reason: r.reason, rollout_id: r.rollout_id },
      {
        state: 'updated',
        reason: null,
        rollout_id: 7,
      },
    );
    assert.equal(sha256(bin), sha256(join(v2, 'palisade-agent-0.1.2-linux-x64')));
    assert.equal(sha256(`${bin}.prev`), originalSum);
    assert.equal(versionOf(`${bin}.prev`), '0.1.1');
    assert.equal((await health(url)).version, '0.1.2', 'the new agent keeps running');
  });

  test('a version that never checks in is rolled back once health_timeout_s has passed', async () => {
    const newSum = sha256(bin);
    const offset = sup.output().length;
    putRequest(v1, '0.1.1', { timeout: 30, rollout: 8 }).write();
    const r = await result();
    assert.equal(r.state, 'rolled_back', JSON.stringify(r));
    assert.equal(r.rollout_id, 8);
    assert.match(r.reason ?? '', /palisade-agent 0\.1\.1 did not check in within 30 s/);
    assert.equal(sha256(bin), newSum, '0.1.2 is back');
    const url = await eventually(
      'the agent of 0.1.2 again',
      async () => {
        const u = await listening(offset);
        return (await health(u)).version === '0.1.2' ? u : undefined;
      },
      60_000,
    );
    assert.ok(url);
  });

  test('SIGTERM stops the supervisor and its agent, and removes supervisor.pid', async () => {
    assert.ok(existsSync(join(stateDir, 'supervisor.pid')));
    const agentPid = Number(readFileSync(join(stateDir, 'agent.pid'), 'utf8').trim());
    assert.equal(await sup.stop('SIGTERM'), 0);
    assert.ok(!existsSync(join(stateDir, 'supervisor.pid')));
    assert.throws(() => process.kill(agentPid, 0), /ESRCH/);
  });
});

describe('request.json as the root updater reads it', () => {
  const good = {
    rollout_id: 3,
    version: '0.4.1',
    artifact: 'palisade-agent-0.4.1-linux-x64',
    sha256: 'a'.repeat(64),
    health_timeout_s: 600,
    requested_at: 1,
  };

  test('a well-formed request is taken as is, the bundle artifact too', () => {
    assert.deepEqual(parseUpdateRequest(JSON.stringify({ ...good, extra: 1 })), good);
    const mjs = { ...good, artifact: 'palisade-agent-0.4.1.mjs' };
    assert.deepEqual(parseUpdateRequest(JSON.stringify(mjs)), mjs);
  });

  test('each bad field is refused with its name and what was expected', () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ rollout_id: 0 }, /rollout_id: expected a positive whole number/],
      [{ rollout_id: '3' }, /rollout_id/],
      [{ version: '0.4' }, /version: expected a version such as 0\.2\.0/],
      [{ version: '0.4.1-../../x' }, /version/],
      [{ artifact: '../palisade-agent-0.4.1-linux-x64' }, /artifact: expected palisade-agent-0\.4\.1-linux-x64 or/],
      [{ artifact: 'palisade-agent-0.4.2-linux-x64' }, /artifact/],
      [{ sha256: 'A'.repeat(64) }, /sha256: expected 64 lowercase hex digits/],
      [{ health_timeout_s: 29 }, /health_timeout_s: expected whole seconds from 30 to 3600/],
      [{ health_timeout_s: 3601 }, /health_timeout_s/],
      [{ requested_at: -1 }, /requested_at/],
    ];
    for (const [change, message] of cases) {
      assert.throws(() => parseUpdateRequest(JSON.stringify({ ...good, ...change })), message, JSON.stringify(change));
    }
    assert.throws(() => parseUpdateRequest('[1]'), /expected an object/);
    assert.throws(() => parseUpdateRequest('{'), /not valid JSON/);
  });

  test("SHA256SUMS gives a file's sum only for its exact name", () => {
    const sums = `${'b'.repeat(64)}  palisade-agent-0.4.1-linux-x64\n${'c'.repeat(64)} *palisade-agent-0.4.1.mjs\n`;
    assert.equal(sumFor(sums, 'palisade-agent-0.4.1-linux-x64'), 'b'.repeat(64));
    assert.equal(sumFor(sums, 'palisade-agent-0.4.1.mjs'), 'c'.repeat(64));
    assert.equal(sumFor(sums, 'palisade-agent-0.4.1'), null);
  });
});
