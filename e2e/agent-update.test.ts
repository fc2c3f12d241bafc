// Agent updates from the console, staged in waves, with rollback (docs/fleet.md, "Agent updates"),
// with real processes only: five agents, each the packaged single executable run by
// `palisade-agent supervise` (the root process that runs the agent where systemd does not), two of
// them reached through their outbound link; a console serving a newly built, signed agent release.
// 1. A rollout in waves 1, 2, the rest: no server is offered the update before every server of the
//    waves before it checked in on the new version, and all five end on it.
// 2. A signed version that fails to start: the first server's supervisor puts the previous
//    executable back by itself, the agent checks in again on it and reports why, the rollout stops
//    (the other servers are never offered it) and the failure reaches the account's alert webhook.
// 3. A release whose signature is not the pinned key's: refused before anything changes.
// Needs Linux x64 and root (the supervisor's rollback runs as root); skipped otherwise (CI fails).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash, generateKeyPairSync, sign } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  linkSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { type Captured, closedPort, rootSuite, spawnCaptured, startReceiver } from '@palisade/testkit';
import {
  accountWithProduct,
  type ConsoleCall,
  type ConsoleProcess,
  eventually,
  startConsoleProcess,
  tempDir,
} from './support/processes.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const suite = rootSuite('agent update', ['setpriv']);

/** The packaged agent (executable, bundle, geo ranges) as `version`, signed with the PEM key in `keyFile`. */
function buildRelease(out: string, version: string, keyFile: string) {
  const res = spawnSync(
    process.execPath,
    [
      join(ROOT, 'scripts/package.mjs'),
      '--agent-only',
      '--agent-version',
      version,
      '--sign-key',
      keyFile,
      '--out',
      out,
    ],
    { encoding: 'utf8' },
  );
  if (res.status !== 0)
    throw new Error(`scripts/package.mjs --agent-version ${version} failed:\n${res.stdout}${res.stderr}`);
}

const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest('hex');

/** SHA256SUMS of every file in `dir` (but the sums and signature), signed with `privatePem`. */
function signDir(dir: string, privatePem: string) {
  const names = readdirSync(dir)
    .filter((f) => !['SHA256SUMS', 'SHA256SUMS.sig', 'release.pub'].includes(f))
    .sort();
  const sums = names.map((f) => `${sha256(readFileSync(join(dir, f)))}  ${f}\n`).join('');
  writeFileSync(join(dir, 'SHA256SUMS'), sums);
  writeFileSync(join(dir, 'SHA256SUMS.sig'), sign(null, Buffer.from(sums), privatePem));
}

interface FleetAgent {
  name: string;
  dir: string;
  bin: string;
  stateDir: string;
  configFile: string;
  supervisor: Captured;
  url: string;
  key: string;
  serverId: number;
}

describe(
  'agent updates: five agents updated in waves, a failing version rolled back, a bad signature refused',
  suite,
  () => {
    const dir = tempDir('palisade-update-');
    const releaseKey = join(dir.path, 'release.key');
    const pinnedKey = join(dir.path, 'release.pub');
    const artifacts = join(dir.path, 'artifacts');
    const agents: FleetAgent[] = [];
    let consoleProc: ConsoleProcess;
    let call: ConsoleCall;
    let receiver: Awaited<ReturnType<typeof startReceiver>>;
    const base = () => consoleProc.url;
    const api = (method: string, path: string, body?: unknown) => call(base(), method, path, body);

    /** Serve the release in `from`: its files copied into the console's artifacts directory, SHA256SUMS last. */
    const serve = (from: string) => {
      mkdirSync(artifacts, { recursive: true });
      for (const f of readdirSync(artifacts)) rmSync(join(artifacts, f));
      const names = readdirSync(from).filter((f) => f !== 'SHA256SUMS');
      for (const f of names) copyFileSync(join(from, f), join(artifacts, f));
      copyFileSync(join(from, 'SHA256SUMS'), join(artifacts, 'SHA256SUMS'));
    };

    /** One agent: a copy of the 0.1.0 executable, its key, and `supervise` running it. */
    const startFleetAgent = async (name: string, exe: string, outbound: boolean) => {
      const agentDir = join(dir.path, name);
      mkdirSync(agentDir);
      const bin = join(agentDir, 'palisade-agent');
      linkSync(exe, bin);
      const stateDir = join(agentDir, 'state');
      const configFile = join(agentDir, 'agent.conf');
      writeFileSync(
        configFile,
        [
          // A fixed port: the console keeps calling the address it was given across restarts.
          `metrics.listen = 127.0.0.1:${await closedPort()}`,
          'checkin.interval_s = 5',
          'protection.backend = monitor',
          `console.connect = ${outbound ? 'outbound' : 'direct'}`,
          'console.link_heartbeat_ms = 1000',
          '',
        ].join('\n'),
      );
      const keyRun = spawnSync(bin, ['key', '--state-dir', stateDir, '--config', configFile], { encoding: 'utf8' });
      const key = /agk_[0-9A-Za-z]+/.exec(`${keyRun.stdout}${keyRun.stderr}`)?.[0];
      if (keyRun.status !== 0 || !key) throw new Error(`palisade-agent key: ${keyRun.stdout}${keyRun.stderr}`);
      const supervisor = spawnCaptured(bin, [
        'supervise',
        '--config',
        configFile,
        '--state-dir',
        stateDir,
        '--release-key-file',
        pinnedKey,
      ]);
      const listening = await supervisor.waitFor(/listening on (https?:\/\/\S+)/);
      if (!listening) throw new Error(`${name}: the supervised agent did not start:\n${supervisor.output()}`);
      const agent: FleetAgent = {
        name,
        dir: agentDir,
        bin,
        stateDir,
        configFile,
        supervisor,
        url: listening[1]!,
        key,
        serverId: 0,
      };
      agents.push(agent);
      return agent;
    };

    const rolloutDetail = async (id: number) => {
      const res = await api('GET', `/api/agent-updates/${id}`);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return res.body.data as {
        rollout: { state: string; current_wave: number; wave_count: number; reason: string | null };
        servers: {
          server_id: number;
          wave: number;
          state: string;
          reason: string | null;
          agent_version: string | null;
        }[];
      };
    };

    /**
     * Polls the rollout until it ends, checking at every look that no server of a later wave has been
     * offered the update while a server of an earlier wave is not yet updated.
     */
    const followRollout = async (id: number, timeoutMs: number) => {
      let looks = 0;
      return eventually(
        `rollout ${id} to end`,
        async () => {
          const d = await rolloutDetail(id);
          looks++;
          const started = d.servers.filter((s) => s.state !== 'pending' && s.state !== 'skipped');
          for (const s of started) {
            const before = d.servers.filter((o) => o.wave < s.wave);
            for (const o of before)
              assert.ok(
                o.state === 'updated' || o.state === 'skipped',
                `look ${looks}: server ${s.server_id} (wave ${s.wave}) is ${s.state} while server ${o.server_id} (wave ${o.wave}) is ${o.state}`,
              );
            assert.ok(s.wave <= d.rollout.current_wave, `look ${looks}: wave ${s.wave} started before its turn`);
          }
          return d.rollout.state === 'running' ? undefined : { ...d, looks };
        },
        timeoutMs,
      );
    };

    const startRollout = async (body: Record<string, unknown>) => {
      const res = await api('POST', '/api/agent-updates', body);
      assert.equal(res.status, 201, JSON.stringify(res.body));
      return res.body.data.rollout.id as number;
    };

    const health = async (agent: FleetAgent) =>
      (await (await fetch(`${agent.url}/health`, { headers: { authorization: `Bearer ${agent.key}` } })).json()) as {
        version?: string;
      };

    before(async () => {
      const { privateKey, publicKey } = generateKeyPairSync('ed25519');
      writeFileSync(releaseKey, privateKey.export({ format: 'pem', type: 'pkcs8' }), { mode: 0o600 });
      writeFileSync(pinnedKey, publicKey.export({ format: 'pem', type: 'spki' }));
      // The version the fleet runs, and the one it is updated to.
      buildRelease(join(dir.path, 'r-0.1.0'), '0.1.0', releaseKey);
      buildRelease(join(dir.path, 'r-0.1.1'), '0.1.1', releaseKey);
      serve(join(dir.path, 'r-0.1.1'));
      receiver = await startReceiver('ok');
      consoleProc = await startConsoleProcess({
        PALISADE_DATA_DIR: join(dir.path, 'console'),
        PALISADE_ALLOW_PRIVATE_TARGETS: '1',
        PALISADE_BOOTSTRAP_ADMIN: '0',
        PALISADE_CHECKIN_INTERVAL_S: '5',
        PALISADE_LINK_HEARTBEAT_MS: '1000',
        PALISADE_ARTIFACTS_DIR: artifacts,
      });
      const account = await accountWithProduct(base(), `update-${process.pid}@example.com`, 2);
      call = account.call;
      const exe = join(dir.path, 'r-0.1.0', 'palisade-agent-0.1.0-linux-x64');
      for (let i = 0; i < 5; i++) {
        const agent = await startFleetAgent(`agent-${i}`, exe, i >= 3);
        const added = await api('POST', '/api/servers', {
          product_id: account.productId,
          name: agent.name,
          api_url: agent.url,
          api_key: agent.key,
        });
        assert.equal(added.status, 201, JSON.stringify(added.body));
        agent.serverId = added.body.data.server.id;
        if (i >= 3) {
          const switched = await api('PUT', `/api/servers/${agent.serverId}/connection`, { mode: 'outbound' });
          assert.equal(switched.status, 200, JSON.stringify(switched.body));
        }
      }
      let seen: unknown[] = [];
      await eventually(
        'all five online on 0.1.0',
        async () => {
          // The version is on each server's page (the fleet list does not carry it).
          const servers = await Promise.all(
            agents.map(
              async (a) =>
                (await api('GET', `/api/servers/${a.serverId}`)).body.data.server as {
                  state: string;
                  agent_version: string | null;
                },
            ),
          );
          seen = servers.map((s) => [s.state, s.agent_version]);
          return servers.length === 5 && servers.every((s) => s.state === 'online' && s.agent_version === '0.1.0')
            ? true
            : undefined;
        },
        60_000,
      ).catch((err: Error) => {
        throw new Error(
          `${err.message}: ${JSON.stringify(seen)}\n${agents.map((a) => a.supervisor.output().slice(-1500)).join('\n---\n')}`,
        );
      });
      const hook = await api('PUT', '/api/account/webhook', { url: receiver.url });
      assert.equal(hook.status, 200, JSON.stringify(hook.body));
      const channel = await api('POST', '/api/alerts/channels', { name: 'ops webhook', kind: 'webhook' });
      assert.equal(channel.status, 201, JSON.stringify(channel.body));
    });

    after(async () => {
      for (const a of agents) await a.supervisor.stop('SIGTERM');
      await consoleProc?.kill();
      await receiver?.close();
      dir.remove();
    });

    test('waves 1, 2, the rest: each wave starts once the one before is updated; all five end on 0.1.1', async () => {
      const list = await api('GET', '/api/agent-updates');
      assert.equal(list.status, 200, JSON.stringify(list.body));
      assert.equal(list.body.data.served_version, '0.1.1');
      assert.equal(list.body.data.signed, true);
      assert.equal(list.body.data.outdated, 5);

      const id = await startRollout({ waves: '1,2,100%', health_timeout_s: 60 });
      const done = await followRollout(id, 240_000);
      assert.equal(done.rollout.state, 'completed', JSON.stringify(done));
      assert.ok(done.looks > 3, `the rollout was seen in between its waves (${done.looks} looks)`);
      assert.deepEqual(
        done.servers.map((s) => s.wave).sort(),
        [0, 1, 2, 2, 2],
        'one server, then one more (two in all), then the other three',
      );
      assert.ok(
        done.servers.every((s) => s.state === 'updated' && s.agent_version === '0.1.1'),
        JSON.stringify(done),
      );
      for (const agent of agents) {
        assert.equal((await health(agent)).version, '0.1.1', `${agent.name} answers as 0.1.1`);
        assert.equal(spawnSync(agent.bin, ['--version'], { encoding: 'utf8' }).stdout.trim(), '0.1.1');
      }
      // The outbound agents came back on their link after the restart.
      for (const agent of agents.slice(3)) {
        const server = (await api('GET', `/api/servers/${agent.serverId}`)).body.data.server;
        assert.equal(server.connection.mode, 'outbound');
      }
    });

    test('a version that fails to start is rolled back by the server itself; the rollout stops and alerts', async () => {
      // 0.1.2: signed with the release key, answers --version, and exits at once when run.
      const broken = join(dir.path, 'r-0.1.2');
      mkdirSync(broken);
      const exe = join(broken, 'palisade-agent-0.1.2-linux-x64');
      writeFileSync(
        exe,
        '#!/bin/sh\nif [ "$1" = --version ]; then echo 0.1.2; exit 0; fi\necho "palisade-agent: this build cannot start" >&2\nexit 7\n',
      );
      chmodSync(exe, 0o755);
      copyFileSync(join(dir.path, 'r-0.1.1', 'release.pub'), join(broken, 'release.pub'));
      signDir(broken, readFileSync(releaseKey, 'utf8'));
      serve(broken);
      const before = readFileSync(agents[0]!.bin);

      const id = await startRollout({ waves: '1,100%', health_timeout_s: 60 });
      const done = await followRollout(id, 180_000);
      assert.equal(done.rollout.state, 'failed', JSON.stringify(done.rollout));
      const first = done.servers.find((s) => s.wave === 0)!;
      assert.equal(first.state, 'rolled_back', JSON.stringify(first));
      assert.match(first.reason ?? '', /exit/, 'the reason names the exits');
      assert.ok(
        done.servers.filter((s) => s.wave > 0).every((s) => s.state === 'skipped'),
        'no server of a later wave was offered the failing version',
      );
      const rolledBack = agents.find((a) => a.serverId === first.server_id)!;
      assert.ok(readFileSync(rolledBack.bin).equals(before), 'the previous executable is back, byte for byte');
      await eventually('the rolled-back agent online again on 0.1.1', async () => {
        const server = (await api('GET', `/api/servers/${rolledBack.serverId}`)).body.data.server;
        return server.state === 'online' && server.agent_version === '0.1.1' ? true : undefined;
      });
      assert.equal((await health(rolledBack)).version, '0.1.1');
      const alert = await eventually('the failure on the alert webhook', () =>
        receiver.deliveries
          .map(
            (d) =>
              JSON.parse(d.body) as {
                kind: string;
                rollout_id: number;
                server_id: number | null;
                title: string;
                reason: string;
              },
          )
          .find((a) => a.kind === 'agent_update.failed' && a.rollout_id === id),
      );
      assert.equal(alert.server_id, first.server_id);
      assert.match(`${alert.title} ${alert.reason}`, /0\.1\.2/);
      assert.equal(
        receiver.deliveries.filter((d) => d.body.includes('"agent_update.failed"')).length,
        1,
        'one alert for the failed rollout',
      );
    });

    test('a release signed with another key is refused before anything changes', async () => {
      const forged = join(dir.path, 'r-0.1.3');
      mkdirSync(forged);
      copyFileSync(
        join(dir.path, 'r-0.1.1', 'palisade-agent-0.1.1-linux-x64'),
        join(forged, 'palisade-agent-0.1.3-linux-x64'),
      );
      const other = generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
      // The console still names the real release key: only the signature is not its.
      copyFileSync(join(dir.path, 'r-0.1.1', 'release.pub'), join(forged, 'release.pub'));
      signDir(forged, other);
      serve(forged);
      const bins = agents.map((a) => sha256(readFileSync(a.bin)));

      const id = await startRollout({ waves: '1,100%', health_timeout_s: 60 });
      const done = await followRollout(id, 120_000);
      assert.equal(done.rollout.state, 'failed');
      const first = done.servers.find((s) => s.wave === 0)!;
      assert.equal(first.state, 'failed', JSON.stringify(first));
      assert.match(first.reason ?? '', /signature|signed/i);
      assert.deepEqual(
        agents.map((a) => sha256(readFileSync(a.bin))),
        bins,
        'no executable changed',
      );
    });
  },
);
