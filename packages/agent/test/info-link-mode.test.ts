// `palisade-agent info` says where the outbound mode came from: a registration
// the console could not reach back keeps `connect: "outbound"` with the enrolment whatever the
// config says, and info must not claim `console.connect = outbound` then. A stand-in console (a real
// HTTP and WebSocket server on loopback) takes the link.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { generateToken } from '@palisade/protocol';
import { WebSocketServer } from 'ws';
import { type AgentProcess, eventually, runCli, startAgent } from './agent-process.js';

const token = generateToken('daemon');
let linked = 0;
const consoleServer = http.createServer((req, res) => {
  req.resume();
  res.writeHead(200, { 'content-type': 'application/json' }).end('{"data":{"interval_s":30,"jobs":[]}}');
});
const wss = new WebSocketServer({ noServer: true });
consoleServer.on('upgrade', (req, socket, head) => {
  if (req.url !== '/api/agent/link' || req.headers.authorization !== `Bearer ${token}`) {
    socket.end('HTTP/1.1 401 Unauthorized\r\ncontent-length: 0\r\nconnection: close\r\n\r\n');
    return;
  }
  wss.handleUpgrade(req, socket, head, () => {
    linked++;
  });
});
let agent: AgentProcess;

before(async () => {
  await new Promise<void>((resolve) => consoleServer.listen(0, '127.0.0.1', resolve));
  agent = await startAgent(); // console.connect left at its default (direct)
});
after(async () => {
  await agent?.stop();
  wss.close();
  consoleServer.close();
});

test('info names the enrolment, not the config, when the outbound mode came from the registration', async () => {
  const consoleUrl = `http://127.0.0.1:${(consoleServer.address() as AddressInfo).port}`;
  // What `register` stores when the console answered that it cannot reach this agent.
  writeFileSync(
    join(agent.stateDir, 'enrolment.json'),
    `${JSON.stringify({ console_url: consoleUrl, token, enrolled_at: Date.now(), connect: 'outbound' })}\n`,
    { mode: 0o600 },
  );
  agent.child.kill('SIGHUP');
  await eventually('the agent opening its link', () => (linked > 0 ? true : undefined));
  const info = await runCli(['info', '--state-dir', agent.stateDir, '--config', agent.configFile]);
  assert.equal(info.code, 0, info.out);
  assert.match(
    info.stdout,
    /^console link: up since \S+ \(kept with the enrolment: the console could not reach this agent when it registered\)$/m,
  );
  assert.doesNotMatch(info.stdout, /console\.connect = outbound/);
});
