// Reloading a real daemon's config: with the CLI and with SIGHUP, good files and bad ones.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { eventually, request, runCli, startAgent, writeConfig } from './agent-process.js';

test('reload applies a good file and refuses a bad one, keeping the running config', async (t) => {
  const agent = await startAgent({ 'checkin.interval_s': '30' });
  t.after(() => agent.stop());
  const health = async () => (await request(`${agent.url}/health`, { key: agent.key })).status;
  assert.equal(await health(), 200);

  writeConfig(agent.configFile, { 'metrics.listen': '127.0.0.1:0', 'metrics.whitelist': '10.0.0.0/8' });
  const good = await runCli(['reload', '--state-dir', agent.stateDir]);
  assert.equal(good.code, 0, good.out);
  assert.match(good.stdout, /^reloaded /m);
  assert.equal(await health(), 403);

  writeConfig(agent.configFile, {
    'metrics.listen': '127.0.0.1:0',
    'metrics.bogus': '1',
    'alerter.queue_max': 'lots',
  });
  const bad = await runCli(['reload', '--state-dir', agent.stateDir]);
  assert.equal(bad.code, 1, bad.out);
  assert.match(bad.stderr, /reload refused, the daemon keeps its running config/);
  assert.ok(bad.stderr.includes(`${agent.configFile}:2: unknown key "metrics.bogus"`), bad.stderr);
  assert.ok(bad.stderr.includes(`${agent.configFile}:3: bad value for alerter.queue_max`), bad.stderr);
  assert.equal(await health(), 403, 'the running whitelist is kept');
  assert.match(agent.output(), /reload refused, the running config is kept/);

  // SIGHUP does the same as the CLI.
  writeConfig(agent.configFile, { 'metrics.listen': '127.0.0.1:0', 'alerter.url': 'http://127.0.0.1:9/hook' });
  agent.child.kill('SIGHUP');
  await eventually('the SIGHUP reload', async () => ((await health()) === 200 ? true : undefined));
  const metrics = (await request(`${agent.url}/metrics`, { key: agent.key })).json;
  assert.equal(metrics.alerter.webhook_set, true);

  writeConfig(agent.configFile, { 'metrics.listen': '127.0.0.1:0', 'checkin.interval_s': '0' });
  agent.child.kill('SIGHUP');
  await eventually('the refusal in the log', () =>
    agent.output().includes(`${agent.configFile}:2: bad value for checkin.interval_s`) ? true : undefined,
  );
  assert.equal(await health(), 200);
  assert.equal((await request(`${agent.url}/metrics`, { key: agent.key })).json.alerter.webhook_set, true);

  const info = await runCli(['info', '--json', '--state-dir', agent.stateDir, '--config', agent.configFile]);
  const parsed = JSON.parse(info.stdout);
  assert.equal(parsed.config_ok, false);
  assert.equal(parsed.daemon.reloads.last_ok, false);
  assert.equal(parsed.daemon.reloads.count, 4);
});
