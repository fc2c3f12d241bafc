// Oversized request bodies on a real daemon: the client reads a 413 naming the limit, then the
// connection closes cleanly (no reset while the client is still sending).
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, test } from 'node:test';
import { type AgentProcess, request, startAgent } from './agent-process.js';

interface Upload {
  status: number;
  connection: string | undefined;
  body: string;
}

/** Sends `size` bytes in 64 KiB writes (with a Content-Length unless `chunked`) and reads the whole answer. */
function upload(url: string, key: string, size: number, chunked = false): Promise<Upload> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, {
      method: 'POST',
      agent: false,
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'text/plain',
        ...(chunked ? {} : { 'content-length': String(size) }),
      },
    });
    let answered = false;
    req.on('response', (res) => {
      answered = true;
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => {
        body += d;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, body }));
      res.on('error', reject);
    });
    // An error after the answer arrived (the server closed while we still wrote) is not the test's concern.
    req.on('error', (err) => {
      if (!answered) reject(err);
    });
    const chunk = Buffer.alloc(64 * 1024, 'a');
    let sent = 0;
    const pump = () => {
      while (sent < size) {
        const n = Math.min(chunk.length, size - sent);
        sent += n;
        if (!req.write(n === chunk.length ? chunk : chunk.subarray(0, n))) {
          req.once('drain', pump);
          return;
        }
      }
      req.end();
    };
    pump();
  });
}

describe('request body limits', () => {
  let agent: AgentProcess;
  const SEVENTEEN_MB = 17 * 1024 * 1024;

  before(async () => {
    agent = await startAgent();
  });
  after(async () => {
    await agent.stop();
  });

  test('a 17 MB control body gets 413 naming the 16 MiB limit, then the connection closes', async () => {
    const res = await upload(`${agent.url}/whitelist/import`, agent.key, SEVENTEEN_MB);
    assert.equal(res.status, 413, res.body);
    assert.deepEqual(JSON.parse(res.body), { error: 'body: larger than the 16777216 byte limit' });
    assert.equal(res.connection, 'close');
    assert.deepEqual((await request(`${agent.url}/whitelist`, { key: agent.key })).json.entries, []);
  });

  test('the same without a Content-Length (chunked)', async () => {
    const res = await upload(`${agent.url}/whitelist/import`, agent.key, SEVENTEEN_MB, true);
    assert.equal(res.status, 413, res.body);
    assert.match(JSON.parse(res.body).error, /^body: larger than the 16777216 byte limit$/);
  });

  test('POST /enroll has its own 16 KiB limit', async () => {
    const res = await upload(`${agent.url}/enroll`, agent.key, SEVENTEEN_MB);
    assert.equal(res.status, 413, res.body);
    assert.deepEqual(JSON.parse(res.body), { error: 'body: larger than the 16384 byte limit' });
  });

  test('the daemon keeps answering afterwards', async () => {
    assert.equal((await request(`${agent.url}/health`, { key: agent.key })).status, 200);
  });
});
