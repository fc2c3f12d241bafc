// The address the console writes into /install/agent.sh (docs/agent.md, "One-line install";
// docs/security.md, "Install script and package"), attacked through the `Host` header of a real
// console process with PALISADE_PUBLIC_URL unset: raw HTTP over node:net, since fetch sets Host
// itself. The script's `CONSOLE=` line is then run in sh, as `sudo sh palisade-install.sh` would run it.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { type ConsoleProcess, startConsoleProcess, tempDir } from './support/processes.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const VERSION: string = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version;

interface RawAnswer {
  status: number;
  body: string;
}

/** One HTTP/1.1 request with exactly the Host given, over a plain socket. */
function rawRequest(url: string, host: string, method = 'GET', path = '/install/agent.sh'): Promise<RawAnswer> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    socket.on('data', (d) => chunks.push(d));
    socket.on('error', reject);
    socket.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const split = text.indexOf('\r\n\r\n');
      const head = text.slice(0, split);
      let body = text.slice(split + 4);
      if (/^transfer-encoding:\s*chunked/im.test(head)) {
        let decoded = '';
        for (;;) {
          const eol = body.indexOf('\r\n');
          const size = Number.parseInt(body.slice(0, eol), 16);
          if (!size) break;
          decoded += body.slice(eol + 2, eol + 2 + size);
          body = body.slice(eol + 2 + size + 2);
        }
        body = decoded;
      }
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]), body });
    });
    socket.write(`${method} ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
  });
}

/** Runs the script's `CONSOLE=` line (if it has one) in sh, in `dir`, and prints what CONSOLE became. */
function runConsoleLine(script: string, dir: string): { line: string | undefined; value: string; code: number | null } {
  const line = script.split('\n').find((l) => l.startsWith('CONSOLE='));
  if (line === undefined) return { line, value: '', code: null };
  const res = spawnSync('sh', ['-c', `${line}\nprintf '%s' "$CONSOLE"`], { cwd: dir, encoding: 'utf8' });
  return { line, value: res.stdout, code: res.status };
}

describe('the install script address', () => {
  const dir = tempDir('palisade-install-script-');
  const artifacts = join(dir.path, 'artifacts');
  let consoleProc: ConsoleProcess;
  let port = 0;

  before(async () => {
    // The script is served only where the packages are: a SHA256SUMS naming the .deb is enough here.
    mkdirSync(artifacts);
    writeFileSync(join(artifacts, 'SHA256SUMS'), `${'0'.repeat(64)}  palisade-agent_${VERSION}_amd64.deb\n`);
    consoleProc = await startConsoleProcess({
      PALISADE_DATA_DIR: join(dir.path, 'data'),
      PALISADE_ARTIFACTS_DIR: artifacts,
      PALISADE_BOOTSTRAP_ADMIN: '0',
    });
    port = Number(new URL(consoleProc.url).port);
  });

  after(async () => {
    await consoleProc?.kill();
    dir.remove();
  });

  test('sh in the Host port is refused (400 naming host), and the address line never runs it', async () => {
    const marker = join(dir.path, 'touched');
    const answer = await rawRequest(consoleProc.url, `127.0.0.1:${port}';touch ${marker};'`);
    const ran = runConsoleLine(answer.body, dir.path);
    assert.ok(!existsSync(marker), `the address line ran the Host's command: ${ran.line}`);
    assert.equal(answer.status, 400, answer.body.slice(0, 300));
    assert.match(JSON.parse(answer.body).error, /^host: expected a host name or an IP address/);
    assert.ok(!answer.body.includes('touch'), 'the refusal does not echo the Host');
    // The enrolment answer's pasted command and the server's enrol command are built the same way.
    for (const path of ['/api/enrolment-tokens', '/api/servers']) {
      const post = await rawRequest(consoleProc.url, `127.0.0.1:${port}';touch ${marker};'`, 'POST', path);
      assert.ok(!post.body.includes('touch'), `${path}: ${post.body.slice(0, 300)}`);
    }
  });

  test("$' and $& in a Host are refused, never expanded; so are ports outside 1-65535 and bad names", async () => {
    for (const host of [
      `127.0.0.1:${port}$&`,
      `127.0.0.1:${port}$'`,
      `127.0.0.1:$'${port}`,
      '127.0.0.1:0',
      '127.0.0.1:65536',
      '127.0.0.1:99999',
      `127.0.0.1:${port}:1`,
      `[::1;id]:${port}`,
      `[::1]x:${port}`,
    ]) {
      const answer = await rawRequest(consoleProc.url, host);
      assert.ok(!answer.body.includes('@CONSOLE_URL@'), `${host}: a replacement pattern was expanded`);
      assert.ok(!answer.body.startsWith('#!/bin/sh'), `${host}: served a script`);
      assert.ok([400, 421].includes(answer.status), `${host}: ${answer.status} ${answer.body.slice(0, 200)}`);
    }
  });

  test('a valid Host becomes a single-quoted address that sh reads back exactly', async () => {
    for (const [host, expected] of [
      [`127.0.0.1:${port}`, `http://127.0.0.1:${port}`],
      [`LocalHost:${port}`, `http://localhost:${port}`],
      [`[::1]:${port}`, `http://[::1]:${port}`],
      ['127.0.0.1', 'http://127.0.0.1'],
    ] as const) {
      const answer = await rawRequest(consoleProc.url, host);
      assert.equal(answer.status, 200, `${host}: ${answer.body.slice(0, 200)}`);
      assert.ok(answer.body.includes(`\nCONSOLE='${expected}'\n`), host);
      assert.ok(answer.body.includes(`\nVERSION='${VERSION}'\n`));
      const ran = runConsoleLine(answer.body, dir.path);
      assert.deepEqual([ran.code, ran.value], [0, expected]);
      assert.equal(spawnSync('sh', ['-n'], { input: answer.body }).status, 0, 'the script parses');
    }
  });

  test("PALISADE_PUBLIC_URL goes in verbatim, quotes and $' $& included, read back exactly by sh", async () => {
    const publicUrl = "http://it's$&$'.example:8443";
    const named = await startConsoleProcess({
      PALISADE_DATA_DIR: join(dir.path, 'data-named'),
      PALISADE_ARTIFACTS_DIR: artifacts,
      PALISADE_BOOTSTRAP_ADMIN: '0',
      PALISADE_PUBLIC_URL: publicUrl,
    });
    try {
      const answer = await rawRequest(named.url, `127.0.0.1:${new URL(named.url).port}`);
      assert.equal(answer.status, 200, answer.body.slice(0, 200));
      assert.ok(!answer.body.includes('@CONSOLE_URL@'));
      const ran = runConsoleLine(answer.body, dir.path);
      assert.deepEqual([ran.code, ran.value], [0, publicUrl], ran.line);
      assert.equal(spawnSync('sh', ['-n'], { input: answer.body }).status, 0, 'the script parses');
    } finally {
      await named.kill();
    }
  });
});
