// Pattern names and kinds never carry control characters: the
// control API refuses them (400 naming the field), a hand-edited patterns.json cannot forge a log
// line, and the check-ins never report a ban whose kind or pattern name is not plain text.
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createBanOutbox } from '../src/checkin/ban-outbox.js';
import { keyFrom, request, runCli, spawnAgent, tempDir, writeConfig } from './agent-process.js';

const FORGED = '2026-01-01T00:00:00.000Z error forged by a pattern name';

describe('pattern names with control characters', () => {
  const dir = tempDir();
  let agent: Awaited<ReturnType<typeof spawnAgent>>;
  let key = '';
  const call = (method: string, path: string, body?: unknown) =>
    request(`${'url' in agent ? agent.url : ''}/${path}`, { key, method, ...(body !== undefined ? { body } : {}) });

  before(async () => {
    const configFile = join(dir.path, 'agent.conf');
    const stateDir = join(dir.path, 'state');
    writeConfig(configFile, { 'metrics.listen': '127.0.0.1:0', 'protection.backend': 'monitor' });
    const made = await runCli(['key', '--state-dir', stateDir, '--config', configFile]);
    key = keyFrom(made.stdout) ?? '';
    assert.ok(key, made.out);
    // A patterns.json edited by hand (or by the agent's user) with a line break in a name.
    mkdirSync(join(stateDir, 'protection'), { recursive: true, mode: 0o700 });
    writeFileSync(
      join(stateDir, 'protection', 'patterns.json'),
      JSON.stringify([
        {
          name: `x\n${FORGED}`,
          file: '/var/log/none.log',
          regex: 'x (?<ip>\\S+)',
          threshold: 1,
          window_s: 60,
          ban_s: 60,
        },
      ]),
    );
    agent = await spawnAgent(['run', '--config', configFile, '--state-dir', stateDir]);
    assert.ok('url' in agent, 'exitCode' in agent ? agent.out : '');
  });
  after(async () => {
    if ('stop' in agent) await agent.stop();
    dir.remove();
  });

  test('a stored name with a line break is not loaded, and forges no log line', () => {
    assert.ok('output' in agent);
    const out = agent.output();
    assert.match(out, /pattern "x\\n2026-01-01T00:00:00.000Z error forged by a pattern name" not loaded/);
    assert.ok(!out.split('\n').some((l) => l.startsWith(FORGED)), out);
  });

  test('the control API refuses control characters and markup in a pattern name (400 naming name)', async () => {
    for (const name of ['a\nb', 'a\u0000b', 'a\rb', '<script>alert(1)</script>', 'tab\there']) {
      const r = await call('POST', 'block-pattern', {
        name,
        file: '/var/log/none.log',
        regex: 'x (?<ip>\\S+)',
        threshold: 1,
        window_s: 60,
        ban_s: 60,
      });
      assert.equal(r.status, 400, `${JSON.stringify(name)}: ${r.body}`);
      assert.match(r.json.error, /^name: /);
    }
    const removed = await call('DELETE', `block-pattern?name=${encodeURIComponent('a\n<script>')}`);
    assert.equal(removed.status, 400, removed.body);
    assert.match(removed.json.error, /^name: expected no control characters/);
    const patterns = await call('GET', 'block-pattern');
    assert.equal(patterns.status, 200);
    assert.ok(!JSON.stringify(patterns.json).includes('forged'), 'nothing was stored');
  });

  test('the check-ins never carry a ban whose kind or pattern name is not plain text', () => {
    const outbox = createBanOutbox();
    const ban = { ip: '203.0.113.7', kind: 'log_pattern', attack_id: 'atk_1', at: Date.now(), ttl_s: 60 };
    outbox.push({ ...ban, pattern: 'sshd' });
    outbox.push({ ...ban, pattern: 'a\nb' });
    outbox.push({ ...ban, kind: 'conn\u0000flood', pattern: null });
    outbox.push({ ...ban, kind: '<script>', pattern: null });
    assert.deepEqual(
      outbox.next().map((b) => b.pattern),
      ['sshd'],
    );
    assert.equal(outbox.skipped, 3);
  });
});
