// `palisade agents update…` and the SignedClient's agent-update calls against a real console process
// serving a signed release, with a real agent checking in (docs/fleet.md, "Agent updates").
import assert from 'node:assert/strict';
import { createHash, generateKeyPairSync, sign } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { PalisadeError, SignedClient } from '@palisade/sdk';
import {
  type AgentProcess,
  type ConsoleProcess,
  eventually,
  runCli,
  startAgent,
  startConsoleProcess,
  tempDir,
} from './support/processes.js';

const CLI = fileURLToPath(new URL('../../packages/sdk/dist/src/cli.js', import.meta.url));
const TARGET = '9.8.7';
const dir = tempDir('palisade-sdk-updates-');
const palisade = (args: string[], env: Record<string, string>) => runCli(CLI, args, { HOME: dir.path, ...env });

/** A signed release of agent TARGET, as npm run package -- --sign-key writes one (stand-in files). */
function signedRelease(path: string) {
  mkdirSync(path);
  const exe = `palisade-agent-${TARGET}-linux-x64`;
  writeFileSync(join(path, exe), '#!/bin/sh\necho stand-in\n');
  const sums = `${createHash('sha256').update('#!/bin/sh\necho stand-in\n').digest('hex')}  ${exe}\n`;
  writeFileSync(join(path, 'SHA256SUMS'), sums);
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  writeFileSync(join(path, 'SHA256SUMS.sig'), sign(null, Buffer.from(sums), privateKey));
  writeFileSync(
    join(path, 'release.pub'),
    `${Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url').toString('base64')}\n`,
  );
}

describe('palisade agents update… against a real console and agent', () => {
  let consoleProc: ConsoleProcess;
  let agent: AgentProcess;
  let env: Record<string, string> = {};
  let serverId = 0;

  before(async () => {
    signedRelease(join(dir.path, 'artifacts'));
    consoleProc = await startConsoleProcess({
      PALISADE_DATA_DIR: join(dir.path, 'console'),
      PALISADE_ARTIFACTS_DIR: join(dir.path, 'artifacts'),
      PALISADE_ALLOW_PRIVATE_TARGETS: '1',
      PALISADE_BOOTSTRAP_ADMIN: '0',
    });
    agent = await startAgent();
    const post = async (path: string, body: unknown, cookie?: string) => {
      const res = await fetch(`${consoleProc.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(cookie ? { cookie } : {}) },
        body: JSON.stringify(body),
      });
      return { res, json: (await res.json()) as { data: Record<string, { id: number }> & { key: string } } };
    };
    const reg = await post('/api/auth/register', {
      email: `sdk-updates-${process.pid}@example.com`,
      password: 'sdk-password',
      name: 'SDK User',
    });
    const cookie = reg.res.headers.get('set-cookie')!.split(';')[0]!;
    const product = (await post('/api/products', { catalog_id: 1 }, cookie)).json.data.product!;
    serverId = (
      await post(
        '/api/servers',
        { product_id: product.id, name: 'update-box', api_url: agent.url, api_key: agent.key },
        cookie,
      )
    ).json.data.server!.id;
    env = {
      PALISADE_URL: consoleProc.url,
      PALISADE_KEY: (await post('/api/keys', { name: 'cli' }, cookie)).json.data.key as unknown as string,
    };
    // The agent checks in on its own version, so it is a server the rollout takes.
    const client = new SignedClient({ baseUrl: consoleProc.url, key: env.PALISADE_KEY! });
    await eventually('a check-in', async () => ((await client.agentUpdates()).outdated === 1 ? true : undefined));
  });

  after(async () => {
    await agent?.stop();
    await consoleProc?.kill();
    dir.remove();
  });

  test('list, start, follow and cancel a rollout; refusals exit 1 with the console’s words, usage errors 2', async () => {
    const listed = await palisade(['agents', 'updates'], env);
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, new RegExp(`served agent version ${TARGET} \\(signed\\), 1 servers run another`));
    assert.match(listed.stdout, /\(none\)/);

    const bad = await palisade(['agents', 'update', '--waves', '1,,2'], env);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /waves: expected counts or percentages/);
    const usage = await palisade(['agents', 'update', '--health-timeout', 'soon'], env);
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /--health-timeout: expected a positive integer/);
    const noKey = await palisade(['agents', 'updates'], { PALISADE_URL: consoleProc.url });
    assert.equal(noKey.code, 2);
    assert.match(noKey.stderr, /--key \(or PALISADE_KEY\) is needed/);

    const started = await palisade(['agents', 'update', '--waves', '1', '--health-timeout', '120', '--json'], env);
    assert.equal(started.code, 0, started.stderr);
    const rollout = JSON.parse(started.stdout) as {
      id: number;
      version: string;
      state: string;
      health_timeout_s: number;
    };
    assert.equal(rollout.version, TARGET);
    assert.equal(rollout.state, 'running');
    assert.equal(rollout.health_timeout_s, 120);

    const again = await palisade(['agents', 'update'], env);
    assert.equal(again.code, 1);
    assert.match(again.stderr, new RegExp(`rollout ${rollout.id} to ${TARGET} is still running`));

    const status = await palisade(['agents', 'update-status', String(rollout.id)], env);
    assert.equal(status.code, 0, status.stderr);
    assert.match(
      status.stdout,
      new RegExp(`rollout ${rollout.id} to agent ${TARGET}: running, wave 1 of 2 \\(1,100%\\)`),
    );
    assert.match(status.stdout, new RegExp(`${serverId}\\s+update-box\\s+1\\s+(offered|downloading|applying|failed)`));

    const missing = await palisade(['agents', 'update-status', '999999'], env);
    assert.equal(missing.code, 4);

    // The same write (path and body) signed in the same second by two clients is one signature, which
    // the console takes once (docs/signing.md, "Replay"): this client signs two seconds on.
    const client = new SignedClient({ baseUrl: consoleProc.url, key: env.PALISADE_KEY!, now: () => Date.now() + 2000 });
    const cancelled = await palisade(['agents', 'update-cancel', String(rollout.id)], env);
    assert.equal(cancelled.code, 0, cancelled.stderr);
    assert.match(cancelled.stdout, new RegExp(`rollout ${rollout.id} cancelled`));
    assert.equal((await client.agentUpdate(rollout.id)).rollout.state, 'cancelled');
    await assert.rejects(
      client.cancelAgentUpdate(rollout.id),
      (err: unknown) => err instanceof PalisadeError && err.status === 409,
    );
    const help = await palisade(['--help'], env);
    assert.match(help.stdout, /palisade agents update \[--tag <tag>\] \[--waves 1,10%,100%\] \[--health-timeout <s>\]/);
  });
});
