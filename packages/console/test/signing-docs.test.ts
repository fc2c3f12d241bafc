import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { type ConsoleProcess, startConsoleProcess } from './console-process.js';

const DOC = fileURLToPath(new URL('../../../../docs/signing.md', import.meta.url));

/** The fenced blocks of one language in docs/signing.md, in order. */
function blocks(language: string): string[] {
  const text = readFileSync(DOC, 'utf8');
  return [...text.matchAll(new RegExp('```' + language + '\\n([\\s\\S]*?)```', 'g'))].map((m) => m[1]!);
}

describe('the examples in docs/signing.md run against a real console', () => {
  const dir = mkdtempSync(join(tmpdir(), 'palisade-signing-docs-'));
  let running: ConsoleProcess;
  let env: Record<string, string> = {};

  before(async () => {
    running = await startConsoleProcess({ PALISADE_DATA_DIR: dir, PALISADE_BOOTSTRAP_ADMIN: '0' });
    const post = (path: string, body: unknown, cookie?: string) =>
      fetch(`${running.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(cookie ? { cookie } : {}) },
        body: JSON.stringify(body),
      });
    const reg = await post('/api/auth/register', {
      email: 'docs@example.com',
      password: 'docs-password',
      name: 'Docs',
    });
    const cookie = reg.headers.get('set-cookie')!.split(';')[0]!;
    await post('/api/products', { catalog_id: 1 }, cookie); // product 1 of this fresh console
    const key = ((await (await post('/api/keys', { name: 'docs' }, cookie)).json()) as { data: { key: string } }).data
      .key;
    env = { PATH: process.env.PATH ?? '', PALISADE_URL: running.url, PALISADE_KEY: key };
  });
  after(async () => {
    await running.kill();
    rmSync(dir, { recursive: true, force: true });
  });

  test('curl + openssl', () => {
    const [read, open] = blocks('sh');
    assert.ok(read && open, 'two sh examples');
    const me = spawnSync('bash', ['-euo', 'pipefail', '-c', read], { env, encoding: 'utf8' });
    assert.equal(me.status, 0, me.stderr);
    assert.equal(JSON.parse(me.stdout).data.email, 'docs@example.com');
    const ticket = spawnSync('bash', ['-euo', 'pipefail', '-c', open], { env, encoding: 'utf8' });
    assert.equal(ticket.status, 0, ticket.stderr);
    assert.match(JSON.parse(ticket.stdout).data.ticket.ref, /^T-/);
  });

  test("Python's standard library", () => {
    const [script] = blocks('python');
    assert.ok(script);
    const res = spawnSync('python3', ['-c', script], { env, encoding: 'utf8' });
    assert.equal(res.status, 0, res.stderr);
    const [opened, list] = res.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    assert.equal(opened.data.ticket.subject, 'Signed from Python');
    assert.ok(list.data.tickets.length >= 2);
  });
});
