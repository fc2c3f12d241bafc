#!/usr/bin/env node
// The packaged agent beside today's `node packages/agent/dist/src/cli.js`: time from spawn to the
// first /health 200, and resident memory after start and after 10 s idle, for each way to run it.
// Needs `npm run package` first (dist/packages/). Runs each variant RUNS times, reports medians.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const version = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version;
const out = join(root, 'dist/packages');
const RUNS = Number(process.env.RUNS ?? 5);
const IDLE_MS = 10_000;

const variants = [
  { name: 'node dist/src/cli.js', cmd: process.execPath, args: [join(root, 'packages/agent/dist/src/cli.js')] },
  { name: `palisade-agent-${version}.mjs`, cmd: process.execPath, args: [join(out, `palisade-agent-${version}.mjs`)] },
  { name: `palisade-agent-${version}-linux-x64`, cmd: join(out, `palisade-agent-${version}-linux-x64`), args: [] },
];
for (const v of variants.slice(1))
  if (!existsSync(v.args[0] ?? v.cmd)) {
    console.error(`missing ${v.args[0] ?? v.cmd}: run \`npm run package\` first`);
    process.exit(1);
  }

const rssMb = (pid) => Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function once(v) {
  const dir = mkdtempSync(join(tmpdir(), 'palisade-agent-package-bench-'));
  const config = join(dir, 'agent.conf');
  const stateDir = join(dir, 'state');
  writeFileSync(config, 'metrics.listen = 127.0.0.1:0\nprotection.backend = monitor\n');
  const made = spawnSync(v.cmd, [...v.args, 'key', '--config', config, '--state-dir', stateDir], { encoding: 'utf8' });
  const key = /agk_[0-9A-Za-z]+/.exec(made.stdout)?.[0];
  if (!key) throw new Error(`${v.name} key: ${made.stdout}${made.stderr}`);
  const started = process.hrtime.bigint();
  const child = spawn(v.cmd, [...v.args, 'run', '--config', config, '--state-dir', stateDir], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  child.stdout.on('data', (d) => {
    text += d;
  });
  child.stderr.on('data', (d) => {
    text += d;
  });
  const exited = new Promise((r) => child.on('exit', r));
  let url = null;
  for (;;) {
    url ??= /listening on (http:\/\/\S+)/.exec(text)?.[1] ?? null;
    if (url) {
      const ok = await fetch(`${url}/health`, { headers: { authorization: `Bearer ${key}` } }).then(
        (r) => r.status === 200,
        () => false,
      );
      if (ok) break;
    }
    if (child.exitCode !== null) throw new Error(`${v.name} exited: ${text}`);
    await sleep(5);
  }
  const startMs = Number(process.hrtime.bigint() - started) / 1e6;
  const rssStart = rssMb(child.pid);
  await sleep(IDLE_MS);
  const rssIdle = rssMb(child.pid);
  child.kill('SIGTERM');
  await exited;
  rmSync(dir, { recursive: true, force: true });
  return { startMs, rssStart, rssIdle };
}

console.log(`agent packaging: ${RUNS} runs each, medians; idle RSS after ${IDLE_MS / 1000} s`);
console.log('variant                                   size MB  first /health ms  RSS start MB  RSS idle MB');
for (const v of variants) {
  const results = [];
  for (let i = 0; i < RUNS; i++) results.push(await once(v));
  const file = v.args[0] ?? v.cmd;
  const size = v.name.startsWith('node ') ? '-' : (statSync(file).size / 1e6).toFixed(1);
  console.log(
    [
      v.name.padEnd(40),
      size.padStart(8),
      median(results.map((r) => r.startMs))
        .toFixed(0)
        .padStart(17),
      median(results.map((r) => r.rssStart))
        .toFixed(1)
        .padStart(13),
      median(results.map((r) => r.rssIdle))
        .toFixed(1)
        .padStart(12),
    ].join(' '),
  );
}
