// The agent's half of updates from the console (docs/agent.md, "The agent's part"), against a real
// console serving a real signed release: packages built by scripts/package.mjs and signed with this
// test's own release key (made by `palisade-console release-key new`), downloaded from the
// console's /install/ files. The console does not offer updates in check-in answers yet, so the
// offer is handed to the update module directly; what only a running daemon does (checked-in.json
// after a check-in the console answered 200) is seen on the real daemon, checking in to that console.
import assert from 'node:assert/strict';
import { createHash, createPrivateKey, createPublicKey, sign } from 'node:crypto';
import {
  closeSync,
  cpSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { generateToken } from '@palisade/protocol';
import type { UpdateReport } from '@palisade/protocol/agent-update';
import { type Captured, eventually, runToEnd, spawnCaptured, tempDir } from '@palisade/testkit';
import { parseAnswer } from '../src/checkin/checkin.js';
import { getToFile } from '../src/lib/outbound.js';
import { createAgentUpdates } from '../src/update/agent-updates.js';
import { type AgentForm, agentForm, readOffer } from '../src/update/offer.js';
import { FROM_CHECKOUT, sumOf } from '../src/update/take-offer.js';
import { updatePaths } from '../src/update/update-files.js';
import { runCli, spawnAgent, writeConfig } from './agent-process.js';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const CONSOLE_CLI = join(ROOT, 'packages/console/dist/src/cli.js');
/** The version the packages are built as: the console's own, the one its /install/ serves. */
const VERSION = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version as string;
const MJS = `palisade-agent-${VERSION}.mjs`;
const EXE = `palisade-agent-${VERSION}-linux-x64`;
/** The version the agent under test says it runs: older than the one offered. */
const RUNNING = '0.0.9';
const MJS_FORM: AgentForm = { kind: 'mjs', file: `/opt/palisade/palisade-agent-${RUNNING}.mjs` };

const dir = tempDir('palisade-update-offer-');
const built = join(dir.path, 'built');
const served = join(dir.path, 'served');
const keyFile = join(dir.path, 'release.key');
const pinned = join(dir.path, 'release.pub');
let consoleProc: Captured;
let consoleUrl = '';

const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest('hex');

/** The served release as built, undoing a test's tampering. */
function serveAsBuilt() {
  rmSync(served, { recursive: true, force: true });
  cpSync(built, served, { recursive: true });
}

/** SHA256SUMS of the served files written again and signed with the release key, as a release of them would be. */
function signServed() {
  const names = readdirSync(served)
    .filter((n) => n.startsWith('palisade-agent'))
    .sort();
  const sums = names.map((n) => `${sha256(readFileSync(join(served, n)))}  ${n}\n`).join('');
  writeFileSync(join(served, 'SHA256SUMS'), sums);
  writeFileSync(join(served, 'SHA256SUMS.sig'), sign(null, Buffer.from(sums), createPrivateKey(readFileSync(keyFile))));
}

const offerOf = (rolloutId: number, version = VERSION) => ({
  rollout_id: rolloutId,
  version,
  sums_path: '/install/SHA256SUMS',
  signature_path: '/install/SHA256SUMS.sig',
  exe_path: `/install/palisade-agent-${version}-linux-x64`,
  mjs_path: `/install/palisade-agent-${version}.mjs`,
  health_timeout_s: 120,
});

/** The update module of an agent running RUNNING with its own state directory, and what it said. */
function agentUpdates(o: { form?: AgentForm; keyFile?: string; stateDir?: string; version?: string } = {}) {
  const stateDir = o.stateDir ?? join(dir.path, `state-${Math.random().toString(36).slice(2)}`);
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  const logs: string[] = [];
  /** The report pending each time the module asked for an early check-in. */
  const told: (string | undefined)[] = [];
  const updates = createAgentUpdates({
    stateDir,
    consoleUrl: () => consoleUrl,
    releaseKeyFile: o.keyFile ?? pinned,
    version: o.version ?? RUNNING,
    clock: () => Date.now(),
    log: (level, message) => logs.push(`${level} ${message}`),
    soon: () => told.push(updates.report()?.state),
    form: () => o.form ?? MJS_FORM,
  });
  return { updates, stateDir, paths: updatePaths(stateDir), logs, told };
}

const readJson = (file: string) => JSON.parse(readFileSync(file, 'utf8'));
const mode = (file: string) => statSync(file).mode & 0o777;

before(async () => {
  const made = await runToEnd(process.execPath, [CONSOLE_CLI, 'release-key', 'new', '--out', keyFile]);
  assert.equal(made.code, 0, made.out);
  // Pinned as the install script pins it: the PEM public key.
  writeFileSync(
    pinned,
    createPublicKey(createPrivateKey(readFileSync(keyFile))).export({ type: 'spki', format: 'pem' }),
  );
  const pack = await runToEnd(process.execPath, [
    join(ROOT, 'scripts/package.mjs'),
    '--agent-only',
    '--agent-version',
    VERSION,
    '--sign-key',
    keyFile,
    '--out',
    built,
  ]);
  assert.equal(pack.code, 0, pack.out);
  serveAsBuilt();
  consoleProc = spawnCaptured(process.execPath, [CONSOLE_CLI], {
    env: {
      PATH: process.env.PATH ?? '',
      PALISADE_PORT: '0',
      PALISADE_LOG_LEVEL: 'warn',
      PALISADE_PASSWORD_COST: '12',
      PALISADE_BOOTSTRAP_ADMIN: '0',
      PALISADE_DATA_DIR: join(dir.path, 'console-data'),
      PALISADE_ARTIFACTS_DIR: served,
    },
  });
  const listening = await consoleProc.waitFor(/listening on (http:\/\/\S+)/);
  assert.ok(listening, consoleProc.output());
  consoleUrl = listening[1]!;
});

after(async () => {
  await consoleProc?.stop();
  dir.remove();
});

describe('taking an offer', () => {
  test('a good release: the .mjs, SHA256SUMS and its signature downloaded (0600, in a 0700 directory), request.json names the signed SHA-256, applying reported', async () => {
    const a = agentUpdates();
    await a.updates.offer(offerOf(11));
    const expected = sumOf(readFileSync(join(built, 'SHA256SUMS'), 'utf8'), MJS);
    assert.match(expected ?? '', /^[0-9a-f]{64}$/);
    const request = readJson(a.paths.request);
    assert.equal(typeof request.requested_at, 'number');
    assert.deepEqual(
      { ...request, requested_at: 0 },
      { rollout_id: 11, version: VERSION, artifact: MJS, sha256: expected, health_timeout_s: 120, requested_at: 0 },
    );
    assert.ok(readFileSync(join(a.paths.dir, MJS)).equals(readFileSync(join(built, MJS))));
    assert.ok(readFileSync(a.paths.sums).equals(readFileSync(join(built, 'SHA256SUMS'))));
    assert.ok(readFileSync(a.paths.signature).equals(readFileSync(join(built, 'SHA256SUMS.sig'))));
    assert.equal(mode(a.paths.dir), 0o700);
    for (const f of [MJS, 'SHA256SUMS', 'SHA256SUMS.sig', 'request.json'])
      assert.equal(mode(join(a.paths.dir, f)), 0o600, f);
    assert.deepEqual(a.told, ['downloading', 'applying'], a.logs.join('\n'));
    assert.deepEqual(a.updates.report(), { rollout_id: 11, version: VERSION, state: 'applying', reason: null });

    // The same rollout offered again (the console offers until it hears of it): not downloaded again.
    rmSync(join(a.paths.dir, MJS));
    await a.updates.offer(offerOf(11));
    assert.equal(existsSync(join(a.paths.dir, MJS)), false);
    assert.deepEqual(a.told, ['downloading', 'applying']);
  });

  test('the single executable: the -linux-x64 file, 0700, its --version run', async () => {
    const a = agentUpdates({ form: { kind: 'exe', file: '/usr/local/bin/palisade-agent' } });
    await a.updates.offer(offerOf(12));
    assert.equal(a.updates.report()?.state, 'applying', a.logs.join('\n'));
    const request = readJson(a.paths.request);
    assert.equal(request.artifact, EXE);
    assert.equal(request.sha256, sha256(readFileSync(join(built, EXE))));
    assert.equal(mode(join(a.paths.dir, EXE)), 0o700);
    assert.equal(existsSync(join(a.paths.dir, MJS)), false, 'only the artifact for how the agent runs');
  });

  test('a tampered SHA256SUMS.sig: failed, naming the signature; no request.json, no artifact', async () => {
    try {
      const sig = readFileSync(join(served, 'SHA256SUMS.sig'));
      sig[0] = sig[0]! ^ 1;
      writeFileSync(join(served, 'SHA256SUMS.sig'), sig);
      const a = agentUpdates();
      await a.updates.offer(offerOf(13));
      const report = a.updates.report();
      assert.equal(report?.state, 'failed');
      assert.match(report?.reason ?? '', /signature/);
      assert.equal(existsSync(a.paths.request), false);
      assert.equal(existsSync(join(a.paths.dir, MJS)), false, 'nothing downloaded past the signature');
    } finally {
      serveAsBuilt();
    }
  });

  test('SHA256SUMS edited and signed with another key: failed, naming the signature', async () => {
    try {
      const other = join(dir.path, 'other.key');
      const made = await runToEnd(process.execPath, [CONSOLE_CLI, 'release-key', 'new', '--out', other]);
      assert.equal(made.code, 0, made.out);
      writeFileSync(join(served, MJS), 'console.log(process.argv.includes("--version") ? "x" : "y");\n');
      const sums = readFileSync(join(served, 'SHA256SUMS'), 'utf8').replace(
        /^[0-9a-f]{64}(?= {2}palisade-agent-.*\.mjs$)/m,
        sha256(readFileSync(join(served, MJS))),
      );
      writeFileSync(join(served, 'SHA256SUMS'), sums);
      writeFileSync(
        join(served, 'SHA256SUMS.sig'),
        sign(null, Buffer.from(sums), createPrivateKey(readFileSync(other))),
      );
      const a = agentUpdates();
      await a.updates.offer(offerOf(14));
      assert.equal(a.updates.report()?.state, 'failed');
      assert.match(
        a.updates.report()?.reason ?? '',
        /signature of SHA256SUMS does not verify against the pinned release key/,
      );
      assert.equal(existsSync(a.paths.request), false);
    } finally {
      serveAsBuilt();
    }
  });

  test('a tampered artifact: failed, naming the SHA-256; no request.json', async () => {
    try {
      writeFileSync(join(served, MJS), Buffer.concat([readFileSync(join(built, MJS)), Buffer.from('\n// changed\n')]));
      const a = agentUpdates();
      await a.updates.offer(offerOf(15));
      const report = a.updates.report();
      assert.equal(report?.state, 'failed');
      assert.match(
        report?.reason ?? '',
        /SHA-256 of palisade-agent-.*\.mjs .* is not the one in the signed SHA256SUMS/,
      );
      assert.equal(existsSync(a.paths.request), false);
    } finally {
      serveAsBuilt();
    }
  });

  test('a signed artifact whose --version is another version: failed, naming what it printed', async () => {
    try {
      writeFileSync(join(served, MJS), 'console.log("9.9.9");\n');
      signServed();
      const a = agentUpdates();
      await a.updates.offer(offerOf(16));
      const report = a.updates.report();
      assert.equal(report?.state, 'failed');
      assert.equal(report?.reason, `${MJS} --version printed "9.9.9", not ${VERSION}`);
      assert.equal(existsSync(a.paths.request), false);
    } finally {
      serveAsBuilt();
    }
  });

  test('no release key pinned: failed before anything is downloaded', async () => {
    const a = agentUpdates({ keyFile: join(dir.path, 'no-such-release.pub') });
    await a.updates.offer(offerOf(17));
    const report = a.updates.report();
    assert.equal(report?.state, 'failed');
    assert.match(
      report?.reason ?? '',
      /^no release key is pinned \(.*no-such-release\.pub\): updates from the console need a signed release/,
    );
    assert.equal(existsSync(a.paths.sums), false);
    assert.equal(existsSync(a.paths.request), false);
    assert.deepEqual(a.told, ['failed'], 'a failure is reported, once');
    await a.updates.offer(offerOf(17));
    assert.deepEqual(a.told, ['failed']);
  });

  test('an agent running from a source checkout: failed, saying to use git and npm; nothing downloaded', async () => {
    const checkout = agentForm('/usr/bin/node', join(ROOT, 'packages/agent/dist/src/cli.js'), () => false);
    assert.equal(checkout.kind, 'checkout');
    const a = agentUpdates({ form: checkout });
    await a.updates.offer(offerOf(18));
    assert.deepEqual(a.updates.report(), { rollout_id: 18, version: VERSION, state: 'failed', reason: FROM_CHECKOUT });
    assert.equal(existsSync(a.paths.sums), false);
  });

  test('how the agent runs decides the artifact', () => {
    assert.deepEqual(
      agentForm('/usr/local/bin/palisade-agent', '/usr/local/bin/palisade-agent', () => true),
      {
        kind: 'exe',
        file: '/usr/local/bin/palisade-agent',
      },
    );
    assert.equal(agentForm('/usr/bin/node', '/opt/p/palisade-agent-0.1.0.mjs', () => false).kind, 'mjs');
    assert.equal(agentForm('/usr/bin/node', join(dir.path, 'agent.mjs'), () => false).kind, 'mjs');
    assert.equal(agentForm('/usr/bin/node', join(ROOT, 'scratch/agent.mjs'), () => false).kind, 'checkout');
  });

  test('an offer for the version the agent runs: updated, nothing downloaded', async () => {
    const a = agentUpdates({ version: VERSION });
    await a.updates.offer(offerOf(19));
    assert.deepEqual(a.updates.report(), { rollout_id: 19, version: VERSION, state: 'updated', reason: null });
    assert.equal(existsSync(a.paths.sums), false);
  });

  test("the check-in answer's update is passed on as sent, for the update module to check", () => {
    assert.deepEqual(parseAnswer(JSON.stringify({ data: { interval_s: 30, jobs: [], update: offerOf(9) } })), {
      intervalS: 30,
      jobs: [],
      update: offerOf(9),
    });
    assert.equal('update' in parseAnswer(JSON.stringify({ data: { interval_s: 30, update: null } })), false);
  });

  test('an offer naming another file or version form is ignored, nothing downloaded', async () => {
    const bad = [
      { ...offerOf(20), exe_path: 'http://elsewhere.example/palisade-agent' },
      { ...offerOf(20), mjs_path: `/install/../../etc/${MJS}` },
      { ...offerOf(20), version: '0.1.0; rm -rf /' },
      { ...offerOf(20), rollout_id: 0 },
      { ...offerOf(20), health_timeout_s: 5 },
      { ...offerOf(20), sums_path: '/install/SHA256SUMS?x' },
      'update',
    ];
    for (const raw of bad) assert.ok('error' in readOffer(raw), JSON.stringify(raw));
    const a = agentUpdates();
    for (const raw of bad) await a.updates.offer(raw);
    assert.equal(existsSync(a.paths.sums), false, 'nothing downloaded');
    assert.equal(existsSync(join(a.paths.dir, MJS)), false);
    assert.equal(a.logs.filter((l) => l.includes('the update offer is ignored')).length, bad.length);
    // The first offer naming its rollout and version is answered failed, once, saying why.
    assert.deepEqual(a.updates.report(), {
      rollout_id: 20,
      version: VERSION,
      state: 'failed',
      reason: 'the offer was refused: update.exe_path: expected /install/' + EXE,
    });
    assert.deepEqual(a.told, ['failed']);
  });

  test('a download larger than allowed is refused by its length', async () => {
    const file = join(dir.path, 'capped');
    const fd = openSync(file, 'w', 0o600);
    try {
      await assert.rejects(
        getToFile(`${consoleUrl}/install/SHA256SUMS.sig`, fd, 10, 10_000),
        /64 bytes, more than the 10 allowed/,
      );
      await assert.rejects(getToFile(`${consoleUrl}/install/palisade-agent-9.9.9.mjs`, fd, 10, 10_000), /HTTP 404/);
      const got = await getToFile(`${consoleUrl}/install/SHA256SUMS.sig`, fd, 64, 10_000);
      assert.deepEqual(got, { bytes: 64, sha256: sha256(readFileSync(join(built, 'SHA256SUMS.sig'))) });
    } finally {
      closeSync(fd);
    }
  });
});

describe('reports', () => {
  test('the pending report survives a restart (report.json) and is dropped once a check-in carrying it is answered 200', async () => {
    const first = agentUpdates();
    await first.updates.offer(offerOf(21));
    const applying: UpdateReport = { rollout_id: 21, version: VERSION, state: 'applying', reason: null };
    assert.deepEqual(first.updates.report(), applying);
    assert.equal(mode(first.paths.report), 0o600);

    const restarted = agentUpdates({ stateDir: first.stateDir });
    assert.deepEqual(restarted.updates.report(), applying, 'carried on after a restart');
    restarted.updates.delivered({ ...applying, state: 'downloading' });
    assert.deepEqual(restarted.updates.report(), applying, 'another report delivered does not drop it');
    restarted.updates.delivered(applying);
    assert.equal(restarted.updates.report(), null);
    const again = agentUpdates({ stateDir: first.stateDir });
    assert.equal(again.updates.report(), null, 'delivered before the restart: not sent again');
    await again.updates.offer(offerOf(21));
    assert.equal(again.updates.report(), null, 'the request in place: the offer is not taken again');
  });

  test("root's result.json is reported, and removed once a check-in carrying it is answered 200; then the update files go", async () => {
    const a = agentUpdates();
    await a.updates.offer(offerOf(22));
    a.updates.delivered(a.updates.report());
    // Root put the previous version back and restarted this agent.
    rmSync(a.paths.request);
    const result = {
      rollout_id: 22,
      version: VERSION,
      state: 'rolled_back',
      reason: 'did not check in within 120 s',
      at: 1,
    };
    writeFileSync(a.paths.result, JSON.stringify(result));
    const restarted = agentUpdates({ stateDir: a.stateDir });
    restarted.updates.refresh();
    const report: UpdateReport = { rollout_id: 22, version: VERSION, state: 'rolled_back', reason: result.reason };
    assert.deepEqual(restarted.updates.report(), report);
    restarted.updates.refresh();
    assert.deepEqual(restarted.updates.report(), report, 'reported once, until delivered');
    assert.ok(existsSync(a.paths.result), 'kept until a check-in carrying it is answered 200');
    restarted.updates.delivered(report);
    assert.equal(existsSync(a.paths.result), false);
    assert.equal(restarted.updates.report(), null);
    restarted.updates.refresh();
    assert.equal(existsSync(a.paths.dir), false, 'the downloads and the report go once root has said its last word');
  });

  test('a result.json that is not one (a link, another state) is removed, not reported', async () => {
    const a = agentUpdates();
    mkdirSync(a.paths.dir, { mode: 0o700 });
    const elsewhere = join(dir.path, 'elsewhere.json');
    writeFileSync(
      elsewhere,
      JSON.stringify({ rollout_id: 3, version: VERSION, state: 'updated', reason: null, at: 1 }),
    );
    symlinkSync(elsewhere, a.paths.result);
    a.updates.refresh();
    assert.equal(a.updates.report(), null, 'a link is never read');
    assert.equal(existsSync(a.paths.result), false);
    assert.ok(existsSync(elsewhere), 'the link went, not what it points to');
    mkdirSync(a.paths.dir, { recursive: true, mode: 0o700 });
    writeFileSync(
      a.paths.result,
      JSON.stringify({ rollout_id: 3, version: VERSION, state: 'applying', reason: null, at: 1 }),
    );
    a.updates.refresh();
    assert.equal(a.updates.report(), null);
    assert.equal(existsSync(a.paths.result), false);
  });

  test('checked-in.json is written only after a check-in answered 200, then updated is reported', () => {
    const stateDir = join(dir.path, 'state-checked-in');
    const paths = updatePaths(stateDir);
    mkdirSync(paths.dir, { recursive: true, mode: 0o700 });
    writeFileSync(
      paths.request,
      JSON.stringify({
        rollout_id: 23,
        version: VERSION,
        artifact: MJS,
        sha256: 'a'.repeat(64),
        health_timeout_s: 60,
        requested_at: 1,
      }),
    );
    const a = agentUpdates({ stateDir, version: VERSION });
    a.updates.refresh();
    assert.equal(existsSync(paths.checkedIn), false);
    assert.equal(a.updates.report(), null);
    a.updates.delivered(null);
    const checkedIn = readJson(paths.checkedIn);
    assert.equal(checkedIn.version, VERSION);
    assert.equal(checkedIn.pid, process.pid);
    assert.deepEqual(a.updates.report(), { rollout_id: 23, version: VERSION, state: 'updated', reason: null });
  });
});

describe('the daemon', () => {
  /** A daemon token of a server registered on the console (outbound: no agent address to check). */
  async function daemonToken(name: string): Promise<string> {
    const json = async (path: string, body: unknown, headers: Record<string, string>) => {
      const res = await fetch(`${consoleUrl}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      });
      const text = await res.text();
      assert.ok(res.status === 200 || res.status === 201, `${path}: ${res.status} ${text}`);
      return { res, body: JSON.parse(text) };
    };
    const signedUp = await json(
      '/api/auth/register',
      { email: `${name}@example.com`, password: 'test-password-123', name },
      {},
    );
    const cookie = signedUp.res.headers.get('set-cookie')!.split(';')[0]!;
    const product = await json('/api/products', { catalog_id: 1 }, { cookie });
    const enrolment = await json('/api/enrolment-tokens', { product_id: product.body.data.product.id }, { cookie });
    const registered = await json(
      '/api/agent/register',
      {
        name: 'updated-server',
        api_key: `agk_${'f'.repeat(40)}`,
        api_url: null,
        port: 9740,
        tls: false,
        tls_fingerprint: null,
        version: VERSION,
        connect: 'outbound',
      },
      { authorization: `Bearer ${enrolment.body.data.token}` },
    );
    return registered.body.data.daemon_token;
  }

  /** A state directory enrolled with `token`, root's request for this version in place. */
  function stateFor(name: string, token: string) {
    const stateDir = join(dir.path, name);
    const paths = updatePaths(stateDir);
    mkdirSync(paths.dir, { recursive: true, mode: 0o700 });
    writeFileSync(
      join(stateDir, 'enrolment.json'),
      JSON.stringify({ console_url: consoleUrl, token, enrolled_at: Date.now() }),
      { mode: 0o600 },
    );
    writeFileSync(
      paths.request,
      JSON.stringify({
        rollout_id: 31,
        version: VERSION,
        artifact: MJS,
        sha256: 'a'.repeat(64),
        health_timeout_s: 60,
        requested_at: 1,
      }),
    );
    const config = join(dir.path, `${name}.conf`);
    writeConfig(config, { 'metrics.listen': '127.0.0.1:0', 'protection.backend': 'monitor' });
    return { stateDir, paths, config };
  }

  test('started for the requested version, it writes checked-in.json after its first check-in answered 200 and reports updated', async () => {
    const s = stateFor('daemon-ok', await daemonToken('checked-in'));
    const agent = await spawnAgent([
      'run',
      '--config',
      s.config,
      '--state-dir',
      s.stateDir,
      '--release-key-file',
      pinned,
    ]);
    assert.ok('child' in agent, 'out' in agent ? agent.out : '');
    try {
      const checkedIn = await eventually('checked-in.json', () =>
        existsSync(s.paths.checkedIn) ? readJson(s.paths.checkedIn) : undefined,
      );
      assert.equal(checkedIn.version, VERSION);
      assert.equal(checkedIn.pid, agent.child.pid);
      // The report goes with the next check-in, and is kept as delivered once answered 200.
      const stored = await eventually('the updated report delivered', () => {
        const r = readJson(s.paths.report);
        return r.delivered ? r : undefined;
      });
      assert.deepEqual(stored.report, { rollout_id: 31, version: VERSION, state: 'updated', reason: null });
    } finally {
      await agent.stop();
    }
  });

  test("root's result.json is carried by a check-in; once the console answered 200 it and the update files go", async () => {
    const s = stateFor('daemon-result', await daemonToken('result'));
    rmSync(s.paths.request);
    writeFileSync(join(s.paths.dir, MJS), 'the download root no longer needs');
    writeFileSync(
      s.paths.result,
      JSON.stringify({
        rollout_id: 32,
        version: VERSION,
        state: 'rolled_back',
        reason: 'exited 3 times in 60 s',
        at: 1,
      }),
    );
    const agent = await spawnAgent([
      'run',
      '--config',
      s.config,
      '--state-dir',
      s.stateDir,
      '--release-key-file',
      pinned,
    ]);
    assert.ok('child' in agent, 'out' in agent ? agent.out : '');
    try {
      await eventually('the update directory removed', () => (existsSync(s.paths.dir) ? undefined : true));
      assert.match(agent.output(), /the root updater says rolled_back: exited 3 times in 60 s/);
    } finally {
      await agent.stop();
    }
  });

  test('a check-in the console refuses (401) writes no checked-in.json', async () => {
    const s = stateFor('daemon-refused', generateToken('daemon'));
    const agent = await spawnAgent([
      'run',
      '--config',
      s.config,
      '--state-dir',
      s.stateDir,
      '--release-key-file',
      pinned,
    ]);
    assert.ok('child' in agent, 'out' in agent ? agent.out : '');
    try {
      await eventually('the refused check-in', async () => {
        const info = await runCli(['info', '--json', '--config', s.config, '--state-dir', s.stateDir]);
        return JSON.parse(info.stdout).daemon?.checkin?.state === 'revoked' ? true : undefined;
      });
      assert.equal(existsSync(s.paths.checkedIn), false);
    } finally {
      await agent.stop();
    }
  });
});
