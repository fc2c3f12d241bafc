// Block patterns cannot freeze a real daemon: only regular files are tailed (a FIFO is refused, and
// one already saved is skipped at start), regexes that backtrack catastrophically are refused, and
// matching one line has a bounded cost even for a regex the check lets through.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  type AgentProcess,
  eventually,
  keyFrom,
  request,
  runCli,
  spawnAgent,
  startAgent,
  tempDir,
  writeConfig,
} from './agent-process.js';

/** Fails instead of hanging when the daemon stops answering (a frozen event loop never answers). */
function answered<T>(what: string, p: Promise<T>, ms = 15_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: no answer, the agent is frozen`)), ms);
    }),
  ]);
}

const limits = { threshold: 5, window_s: 60, ban_s: 60 };

function mkfifo(path: string) {
  const r = spawnSync('mkfifo', [path]);
  assert.equal(r.status, 0, `mkfifo failed: ${r.stderr}`);
}

describe('block patterns cannot freeze the agent', () => {
  let agent: AgentProcess;
  const call = (method: string, path: string, body?: unknown) =>
    answered(
      `${method} /${path}`,
      request(`${agent.url}/${path}`, { key: agent.key, method, ...(body === undefined ? {} : { body }) }),
    );

  before(async () => {
    agent = await startAgent({ 'protection.check_interval_ms': '100' });
  });
  after(async () => {
    await agent.stop();
  });

  test('a FIFO as the log file is refused with 400 naming file, and /health still answers', async () => {
    const fifo = join(agent.dir, 'log.fifo');
    mkfifo(fifo);
    const res = await call('POST', 'block-pattern', { name: 'x', file: fifo, regex: '(?<ip>\\S+)', ...limits });
    assert.equal(res.status, 400, res.body);
    assert.match(res.json.error, /^file: .*FIFO.*regular file/);
    const dir = await call('POST', 'block-pattern', { name: 'x', file: agent.dir, regex: '(?<ip>\\S+)', ...limits });
    assert.equal(dir.status, 400, dir.body);
    assert.match(dir.json.error, /^file: .*directory/);
    assert.deepEqual((await call('GET', 'block-pattern')).json.patterns, []);
    // Three detection rounds later (counted) the daemon still answers.
    const rounds = async () => (await call('GET', 'metrics')).json.protection.detection_rounds as number;
    const from = await rounds();
    await eventually('three detection rounds', async () => ((await rounds()) >= from + 3 ? true : undefined));
    assert.equal((await call('GET', 'health')).status, 200);
  });

  test('a regex with nested quantifiers is refused with 400 naming regex', async () => {
    const log = join(agent.dir, 'app.log');
    writeFileSync(log, '');
    for (const regex of ['(?<ip>\\S+) (a+)+$', '(?<ip>(\\w+\\s?)*)$', '(?<ip>\\d{1,3}(?:\\.\\d{1,3}){3})']) {
      const res = await call('POST', 'block-pattern', { name: 'redos', file: log, regex, ...limits });
      assert.equal(res.status, 400, `${regex}: ${res.body}`);
      assert.match(res.json.error, /^regex: .*backtrack/);
    }
    const flat = await call('POST', 'block-pattern', {
      name: 'flat',
      file: log,
      regex: 'from (?<ip>\\d{1,3}\\.\\d{1,3}\\.\\d{1,3}\\.\\d{1,3})',
      ...limits,
    });
    assert.equal(flat.status, 200, flat.body);
    assert.equal((await call('DELETE', 'block-pattern?name=flat')).status, 200);
  });

  test('a line that makes an accepted regex backtrack costs bounded time; long lines are cut', async () => {
    const log = join(agent.dir, 'slow.log');
    writeFileSync(log, '');
    // Overlapping alternatives under one quantifier pass the star-height check but backtrack exponentially.
    const added = await call('POST', 'block-pattern', {
      name: 'overlap',
      file: log,
      regex: '^(?<ip>\\S+) (a|aa)+$',
      threshold: 1,
      window_s: 60,
      ban_s: 60,
    });
    assert.equal(added.status, 200, added.body);
    const tailEnd = await call('POST', 'block-pattern', {
      name: 'tail-end',
      file: log,
      regex: 'ban (?<ip>\\S+)$',
      threshold: 1,
      window_s: 60,
      ban_s: 60,
    });
    assert.equal(tailEnd.status, 200, tailEnd.body);
    appendFileSync(log, `203.0.113.9 ${'a'.repeat(60)}b\n`);
    appendFileSync(log, `${'x'.repeat(100_000)} ban 203.0.113.10\n`);
    appendFileSync(log, '203.0.113.11 aaaa\n');
    await eventually('the third line to be matched', async () => {
      const p = (await call('GET', 'block-pattern')).json.patterns.find((x: { name: string }) => x.name === 'overlap');
      return p.matches >= 1 ? p : undefined;
    });
    const banned = (await call('GET', 'blacklist')).json.entries.map((e: { ip: string }) => e.ip);
    assert.ok(banned.includes('203.0.113.11'), JSON.stringify(banned));
    assert.ok(!banned.includes('203.0.113.9'));
    assert.ok(!banned.includes('203.0.113.10'), 'a line longer than 4 KiB is cut, so its end cannot match');
    assert.equal((await call('GET', 'health')).status, 200);
  });
});

describe('a saved pattern pointing at a FIFO', () => {
  test('does not hang the daemon at start: it is skipped with a warning', async () => {
    const dir = tempDir();
    const stateDir = join(dir.path, 'state');
    const configFile = join(dir.path, 'agent.conf');
    const fifo = join(dir.path, 'saved.fifo');
    mkfifo(fifo);
    writeConfig(configFile, {
      'metrics.listen': '127.0.0.1:0',
      'metrics.collector_timeout_ms': '10000',
      'protection.backend': 'monitor',
    });
    const made = await runCli(['key', '--state-dir', stateDir, '--config', configFile]);
    const key = keyFrom(made.stdout);
    assert.ok(key, made.out);
    mkdirSync(join(stateDir, 'protection'), { recursive: true });
    writeFileSync(
      join(stateDir, 'protection', 'patterns.json'),
      JSON.stringify([{ name: 'fifo', file: fifo, regex: '(?<ip>\\S+)', threshold: 5, window_s: 60, ban_s: 60 }]),
    );
    const started = await answered(
      'agent start',
      spawnAgent(['run', '--config', configFile, '--state-dir', stateDir]),
    ).catch((err: Error) => ({ exitCode: null, out: err.message }));
    try {
      assert.ok(!('exitCode' in started), JSON.stringify(started));
      if ('exitCode' in started) return;
      assert.equal((await answered('/health', request(`${started.url}/health`, { key }))).status, 200);
      const output = await eventually('the warning', () =>
        /saved\.fifo.*not a regular file/.test(started.output()) ? started.output() : undefined,
      );
      assert.match(output, /warn/);
      const patterns = (await answered('patterns', request(`${started.url}/block-pattern`, { key }))).json.patterns;
      assert.match(patterns[0].file_error, /FIFO/);
      assert.equal((await answered('/health', request(`${started.url}/health`, { key }))).status, 200);
    } finally {
      if (!('exitCode' in started)) await started.stop();
      dir.remove();
    }
  });
});
