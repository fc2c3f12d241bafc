// An agent learns its console's address when it registers, not at its next start (agent
// side): a real console on loopback, a real agent registered with an enrolment
// token (as the install script does), whose key is then rotated for the test's own calls; without a restart, a blacklist add of the console's address
// is a 400 naming `ip` and saying it is the console's, the address is kept with the enrolment, and
// /metrics counts it among the protected addresses.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  AGENT_CLI,
  type AgentProcess,
  accountWithProduct,
  type ConsoleCall,
  type ConsoleProcess,
  runCli,
  startAgent,
  startConsoleProcess,
  tempDir,
} from './support/processes.js';

const agentCall = async (agent: AgentProcess, method: string, path: string, body?: unknown) => {
  const res = await fetch(`${agent.url}/${path}`, {
    method,
    headers: {
      authorization: `Bearer ${agent.key}`,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  // biome-ignore lint/suspicious/noExplicitAny: answers are checked field by field
  return { status: res.status, json: (await res.json()) as any };
};

describe('an agent protects its console from the moment it registers', () => {
  const dir = tempDir('palisade-console-address-');
  let consoleProc: ConsoleProcess;
  let agent: AgentProcess;
  let call: ConsoleCall;
  let productId = 0;

  before(async () => {
    consoleProc = await startConsoleProcess({
      PALISADE_DATA_DIR: join(dir.path, 'console'),
      PALISADE_ALLOW_PRIVATE_TARGETS: '1',
      PALISADE_BOOTSTRAP_ADMIN: '0',
    });
    ({ call, productId } = await accountWithProduct(consoleProc.url, `console-address-${process.pid}@example.com`));
    agent = await startAgent();
  });
  after(async () => {
    await agent?.stop();
    await consoleProc?.kill();
    dir.remove();
  });

  test('register, then a blacklist add of the console address is refused without a restart', async () => {
    const consoleIp = new URL(consoleProc.url).hostname;
    const before = await agentCall(agent, 'GET', 'metrics');
    assert.equal(before.json.protection.protected.console, 0, 'not enrolled yet: no console to protect');

    const created = await call(consoleProc.url, 'POST', '/api/enrolment-tokens', { product_id: productId });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const registered = await runCli(AGENT_CLI, [
      'register',
      '--console',
      consoleProc.url,
      '--token',
      created.body.data.token,
      '--config',
      agent.configFile,
      '--state-dir',
      agent.stateDir,
    ]);
    assert.equal(registered.code, 0, `${registered.stdout}${registered.stderr}`);
    assert.match(registered.stdout, /the running daemon checks in from now on/);
    // register gave the console a new key it does not show; a fresh one for this test's own calls.
    const rotated = await runCli(AGENT_CLI, ['key', '--config', agent.configFile, '--state-dir', agent.stateDir]);
    agent.key = /agk_[0-9A-Za-z]+/.exec(rotated.stdout)?.[0] ?? '';
    assert.ok(agent.key, rotated.stdout + rotated.stderr);

    const refused = await agentCall(agent, 'POST', 'blacklist', { ip: consoleIp, note: 'reported elsewhere' });
    assert.equal(refused.status, 400, JSON.stringify(refused.json));
    assert.match(
      refused.json.error,
      new RegExp(`^ip: ${consoleIp.replaceAll('.', '\\.')} is the address of the console`),
    );
    const covering = await agentCall(agent, 'POST', 'blacklist', [{ ip: '127.0.0.0/8', note: 'fleet entry' }]);
    assert.equal(covering.json.added, 0, JSON.stringify(covering.json));
    assert.match(covering.json.invalid_examples[0], /covers 127\.0\.0\.1, the address of the console/);
    const m = await agentCall(agent, 'GET', 'metrics');
    assert.equal(m.json.protection.protected.console, 1);
    const lookup = await agentCall(agent, 'GET', `blacklist?ip=${consoleIp}`);
    assert.ok(JSON.stringify(lookup.json).includes('console'), JSON.stringify(lookup.json));
    const enrolment = JSON.parse(readFileSync(join(agent.stateDir, 'enrolment.json'), 'utf8'));
    assert.deepEqual(enrolment.console_ips, [consoleIp], 'the console address is kept with the enrolment');

    const black = await agentCall(agent, 'GET', 'blacklist');
    assert.deepEqual(black.json.entries, [], 'nothing was added');
  });
});
