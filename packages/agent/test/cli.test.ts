// The CLI as users run it: bad flags, unreadable config, a port in use, the first key, enrol by hand.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { generateToken } from '@palisade/protocol';
import { eventually, keyFrom, request, runCli, spawnAgent, startAgent, tempDir, writeConfig } from './agent-process.js';

test('bad flags and commands exit non-zero with a message', async () => {
  const unknownOption = await runCli(['run', '--bogus']);
  assert.notEqual(unknownOption.code, 0);
  assert.match(unknownOption.stderr, /unknown option '--bogus'/);
  const unknownCommand = await runCli(['explode']);
  assert.notEqual(unknownCommand.code, 0);
  assert.match(unknownCommand.stderr, /unknown command 'explode'/);
  const badCount = await runCli(['alert-test', '--count', 'zero']);
  assert.notEqual(badCount.code, 0);
  assert.match(badCount.stderr, /--count.*whole number/);
  const missing = await runCli(['enroll', '--console', 'http://127.0.0.1:1']);
  assert.notEqual(missing.code, 0);
  assert.match(missing.stderr, /required option '--token <token>'/);
});

test('an unreadable or invalid config file stops the daemon with file and line', async (t) => {
  const dir = tempDir();
  t.after(() => dir.remove());
  const absent = await runCli(['run', '--config', join(dir.path, 'nope.conf'), '--state-dir', join(dir.path, 's')]);
  assert.equal(absent.code, 1);
  assert.match(absent.stderr, /nope\.conf:0: cannot read the config file: no such file/);

  const conf = join(dir.path, 'agent.conf');
  writeConfig(conf, { 'metrics.listen': 'nowhere', 'metrics.whitelist': '10.0.0.0/33', 'alerter.url': 'ftp://x' });
  const bad = await runCli(['run', '--config', conf, '--state-dir', join(dir.path, 's')]);
  assert.equal(bad.code, 1);
  assert.ok(bad.stderr.includes(`${conf}:1: bad value for metrics.listen`), bad.stderr);
  assert.ok(bad.stderr.includes(`${conf}:2: bad value for metrics.whitelist: "10.0.0.0/33" is not`), bad.stderr);
  assert.ok(
    bad.stderr.includes(`${conf}:3: bad value for alerter.url: expected an http:// or https:// URL`),
    bad.stderr,
  );
});

test('a port in use: clear message, non-zero exit', async (t) => {
  const dir = tempDir();
  t.after(() => dir.remove());
  const blocker = http.createServer();
  await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', () => r()));
  t.after(() => new Promise<void>((r) => blocker.close(() => r())));
  const port = (blocker.address() as AddressInfo).port;
  const conf = join(dir.path, 'agent.conf');
  writeConfig(conf, { 'metrics.listen': `127.0.0.1:${port}` });
  const res = await runCli(['run', '--config', conf, '--state-dir', join(dir.path, 's')]);
  assert.equal(res.code, 1);
  assert.match(
    res.stderr,
    new RegExp(`cannot listen on 127\\.0\\.0\\.1:${port} \\(metrics\\.listen\\): the address is already in use`),
  );
});

test('first start without a key prints none (the log would keep it) and says how to make one; a second daemon on the same state dir is refused; SIGTERM cleans up', async (t) => {
  const dir = tempDir();
  t.after(() => dir.remove());
  const conf = join(dir.path, 'agent.conf');
  const stateDir = join(dir.path, 'state');
  writeConfig(conf, { 'metrics.listen': '127.0.0.1:0', 'checkin.interval_s': '1' });
  const first = await spawnAgent(['run', '--config', conf, '--state-dir', stateDir]);
  assert.ok('url' in first, 'exitCode' in first ? first.out : '');
  t.after(() => first.stop());
  assert.match(first.output(), /No agent key yet/);
  assert.ok(first.output().includes(`palisade-agent key --state-dir ${stateDir}`), first.output());
  assert.equal((await request(`${first.url}/health`)).status, 401);
  assert.equal(statSync(stateDir).mode & 0o777, 0o700);
  assert.equal(readFileSync(join(stateDir, 'agent.pid'), 'utf8').trim(), String(first.child.pid));
  // `palisade-agent key` shows a key (to whoever runs it, not to the log); the daemon takes it at once.
  const made = await runCli(['key', '--state-dir', stateDir, '--config', conf]);
  const key = keyFrom(made.stdout);
  assert.ok(key, made.out);
  assert.equal((await request(`${first.url}/health`, { key })).status, 200);
  // Enrolled with a daemon token whose console is not there: the check-ins fail and are logged.
  const token = generateToken('daemon');
  const enrolled = await runCli([
    'enroll',
    '--state-dir',
    stateDir,
    '--console',
    `http://127.0.0.1:1/${token}`,
    '--token',
    token,
  ]);
  assert.equal(enrolled.code, 0, enrolled.out);
  await eventually('a failed check-in in the log', () => (/check-in|checkin/i.test(first.output()) ? true : undefined));

  const second = await spawnAgent(['run', '--config', conf, '--state-dir', stateDir]);
  assert.ok('exitCode' in second);
  assert.equal(second.exitCode, 1);
  assert.match(second.out, /another palisade-agent \(pid \d+\) is running with state dir/);

  await first.stop();
  assert.equal(first.child.exitCode, 0);
  assert.ok(!existsSync(join(stateDir, 'agent.pid')));
  // Nothing the daemon wrote, from its start to its stop, holds a key or a token.
  assert.doesNotMatch(first.output(), /agk_[0-9A-Za-z]{8}|dmn_[0-9A-Za-z]{8}|enr_[0-9A-Za-z]{8}/, first.output());
  const again = await spawnAgent(['run', '--config', conf, '--state-dir', stateDir]);
  assert.ok('url' in again);
  t.after(() => again.stop());
  assert.doesNotMatch(again.output(), /agk_|No agent key yet/);
  assert.equal((await request(`${again.url}/health`, { key })).status, 200);
});

test('key without a config file prints the default address; reload without a daemon fails clearly', async (t) => {
  const dir = tempDir();
  t.after(() => dir.remove());
  const res = await runCli(['key', '--state-dir', join(dir.path, 'st'), '--config', join(dir.path, 'missing.conf')]);
  assert.equal(res.code, 1, 'a named config file must exist');
  const conf = join(dir.path, 'agent.conf');
  writeConfig(conf, { 'metrics.listen': '0.0.0.0:9740', 'host.public_ip': '203.0.113.7' });
  const ok = await runCli(['key', '--state-dir', join(dir.path, 'st'), '--config', conf]);
  assert.equal(ok.code, 0, ok.out);
  assert.match(ok.stdout, /^Metrics address: http:\/\/203\.0\.113\.7:9740$/m);
  assert.match(ok.stdout, /^Agent key: +agk_/m);
  const reload = await runCli(['reload', '--state-dir', join(dir.path, 'st')]);
  assert.equal(reload.code, 1);
  assert.match(reload.stderr, /no running daemon/);
  const info = await runCli(['info', '--state-dir', join(dir.path, 'st'), '--config', conf]);
  assert.equal(info.code, 0, info.out);
  assert.match(info.stdout, /daemon: +not running/);
  assert.match(info.stdout, /public IP: +203\.0\.113\.7/);
  assert.match(info.stdout, /measurements: all available/);
});

test('enroll on the CLI validates, persists 0600 and starts the running daemon checking in', async (t) => {
  const agent = await startAgent({ 'checkin.interval_s': '1' });
  t.after(() => agent.stop());
  const bad = await runCli([
    'enroll',
    '--console',
    'http://127.0.0.1:1',
    '--token',
    'dmn_short',
    '--state-dir',
    agent.stateDir,
  ]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--token: expected a daemon token/);
  const badUrl = await runCli([
    'enroll',
    '--console',
    'nope',
    '--token',
    generateToken('daemon'),
    '--state-dir',
    agent.stateDir,
  ]);
  assert.equal(badUrl.code, 2);
  assert.match(badUrl.stderr, /--console: expected an http/);

  const token = generateToken('daemon');
  const ok = await runCli([
    'enroll',
    '--console',
    'http://127.0.0.1:1',
    '--token',
    token,
    '--state-dir',
    agent.stateDir,
  ]);
  assert.equal(ok.code, 0, ok.out);
  assert.match(ok.stdout, /running daemon checks in from now on/);
  const file = join(agent.stateDir, 'enrolment.json');
  assert.equal(statSync(file).mode & 0o777, 0o600);
  assert.equal(JSON.parse(readFileSync(file, 'utf8')).token, token);
  const { eventually } = await import('./agent-process.js');
  const checkin = await eventually('a check-in attempt', async () => {
    const m = (await request(`${agent.url}/metrics`, { key: agent.key })).json;
    return m.checkin.last_attempt_at !== null ? m.checkin : undefined;
  });
  assert.equal(checkin.enrolled, true);
  assert.equal(checkin.console_url, 'http://127.0.0.1:1');
});

test('register: bad flags exit 2; without a daemon or a console it says so and keeps the key; enrolled stays as it is', async (t) => {
  const agent = await startAgent();
  t.after(() => agent.stop());
  const base = ['--config', agent.configFile, '--state-dir', agent.stateDir];
  const badToken = await runCli([
    'register',
    '--console',
    'http://127.0.0.1:1',
    '--token',
    generateToken('daemon'),
    ...base,
  ]);
  assert.equal(badToken.code, 2);
  assert.match(badToken.stderr, /--token: expected the enrolment token \(enr_…\)/);
  const badUrl = await runCli(['register', '--console', 'nope', '--token', generateToken('enrolment'), ...base]);
  assert.equal(badUrl.code, 2);
  assert.match(badUrl.stderr, /--console: expected an http/);
  const badMode = await runCli([
    'register',
    '--console',
    'http://127.0.0.1:1',
    '--token',
    generateToken('enrolment'),
    '--connect',
    'sideways',
    ...base,
  ]);
  assert.notEqual(badMode.code, 0);
  assert.match(badMode.stderr, /--connect <mode>.*expected direct, outbound or auto/);

  // No console listening: refused with the reason, and the key the daemon knows still works.
  const { closedPort } = await import('@palisade/testkit');
  const unreachable = await runCli([
    'register',
    '--console',
    `http://127.0.0.1:${await closedPort()}`,
    '--token',
    generateToken('enrolment'),
    ...base,
  ]);
  assert.equal(unreachable.code, 1);
  assert.match(unreachable.stderr, /could not reach the console at http:\/\/127\.0\.0\.1:\d+/);
  assert.equal((await request(`${agent.url}/health`, { key: agent.key })).status, 200, 'the old key was put back');

  // No daemon on this state dir.
  const dir = tempDir();
  t.after(() => dir.remove());
  const alone = await runCli([
    'register',
    '--console',
    'http://127.0.0.1:1',
    '--token',
    generateToken('enrolment'),
    '--wait',
    '1',
    '--config',
    agent.configFile,
    '--state-dir',
    dir.path,
  ]);
  assert.equal(alone.code, 1);
  assert.match(alone.stderr, /no running daemon answered on its control socket: start it first/);
  assert.ok(!existsSync(join(dir.path, 'agent-key.json')), 'no key made for nothing');

  // Already enrolled: nothing changes without --force (re-running the install line is the upgrade).
  const enrolled = await runCli([
    'enroll',
    '--console',
    'http://127.0.0.1:1',
    '--token',
    generateToken('daemon'),
    '--state-dir',
    agent.stateDir,
  ]);
  assert.equal(enrolled.code, 0, enrolled.out);
  const before = readFileSync(join(agent.stateDir, 'agent-key.json'), 'utf8');
  const again = await runCli([
    'register',
    '--console',
    'http://127.0.0.1:1',
    '--token',
    generateToken('enrolment'),
    ...base,
  ]);
  assert.equal(again.code, 0, again.out);
  assert.match(again.stdout, /already registered: http:\/\/127\.0\.0\.1:1/);
  assert.equal(readFileSync(join(agent.stateDir, 'agent-key.json'), 'utf8'), before);
});
