// An idle agent with TLS off, geo off, no outbound link and no benchmark running carries none of
// the modules only those need (docs/performance.md, "Agent memory"): a static import added back
// anywhere on the daemon's path loads them at start again, and this test says which.
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { spawnCaptured, tempDir } from '@palisade/testkit';
import { AGENT_CLI, writeConfig } from './agent-process.js';

const dir = tempDir();
after(() => dir.remove());

// Preloaded into the agent: on SIGUSR2 it prints the built-in modules loaded so far and the
// CommonJS files in the require cache (ws is one).
const PROBE = `
import { createRequire } from 'node:module';
process.on('SIGUSR2', () => {
  const builtins = process.moduleLoadList.filter((m) => m.startsWith('NativeModule ')).map((m) => m.slice(13));
  const files = Object.keys(createRequire(import.meta.url).cache);
  process.stdout.write('LOADED ' + JSON.stringify({ builtins, files }) + '\\n');
});
`;

test('an idle plain-HTTP agent loads neither TLS, zlib, worker threads, readline nor ws', async () => {
  const probe = join(dir.path, 'probe.mjs');
  writeFileSync(probe, PROBE);
  const config = join(dir.path, 'agent.conf');
  writeConfig(config, { 'metrics.listen': '127.0.0.1:0', 'protection.backend': 'monitor' });
  const agent = spawnCaptured(process.execPath, [
    '--import',
    probe,
    AGENT_CLI,
    'run',
    '--config',
    config,
    '--state-dir',
    join(dir.path, 'state'),
  ]);
  try {
    assert.ok(await agent.waitFor(/palisade-agent listening on/), agent.output());
    agent.child.kill('SIGUSR2');
    const line = await agent.waitFor(/LOADED (\{.*\})\n/);
    assert.ok(line, agent.output());
    const loaded = JSON.parse(line[1]!) as { builtins: string[]; files: string[] };
    // What the daemon did load, so the probe is known to see modules at all.
    assert.ok(loaded.builtins.includes('http') && loaded.builtins.includes('crypto'), loaded.builtins.join(' '));
    const unwanted = ['https', 'tls', '_tls_wrap', 'zlib', 'worker_threads', 'readline', 'sea'];
    assert.deepEqual(
      loaded.builtins.filter((m) => unwanted.includes(m)),
      [],
    );
    assert.deepEqual(
      loaded.files.filter((f) => f.includes('/node_modules/ws/')),
      [],
    );
  } finally {
    await agent.stop();
  }
});

// Records every module URL the agent resolves (a loader hook on its own thread, reporting through a
// port) and prints them on SIGUSR2: ES modules are in no require cache.
const URL_PROBE = `
import { register } from 'node:module';
import { MessageChannel } from 'node:worker_threads';
const { port1, port2 } = new MessageChannel();
const urls = [];
port1.on('message', (u) => urls.push(u));
port1.unref();
register(new URL('./hooks.mjs', import.meta.url), { data: { port: port2 }, transferList: [port2] });
process.on('SIGUSR2', () => process.stdout.write('URLS ' + JSON.stringify(urls) + '\\n'));
`;
const HOOKS = `
let port;
export function initialize(data) { port = data.port; }
export async function resolve(specifier, context, next) {
  const r = await next(specifier, context);
  port.postMessage(r.url);
  return r;
}
`;

test('an agent whose block patterns read only files never loads the journal reader', async () => {
  writeFileSync(join(dir.path, 'urls.mjs'), URL_PROBE);
  writeFileSync(join(dir.path, 'hooks.mjs'), HOOKS);
  const config = join(dir.path, 'agent-files.conf');
  writeConfig(config, { 'metrics.listen': '127.0.0.1:0', 'protection.backend': 'monitor' });
  const state = join(dir.path, 'state-files');
  mkdirSync(join(state, 'protection'), { recursive: true, mode: 0o700 });
  writeFileSync(
    join(state, 'protection', 'patterns.json'),
    JSON.stringify([
      {
        name: 'app',
        file: join(dir.path, 'app.log'),
        regex: 'denied (?<ip>\\S+)',
        threshold: 5,
        window_s: 60,
        ban_s: 60,
      },
    ]),
  );
  const agent = spawnCaptured(process.execPath, [
    '--import',
    join(dir.path, 'urls.mjs'),
    AGENT_CLI,
    'run',
    '--config',
    config,
    '--state-dir',
    state,
  ]);
  try {
    assert.ok(await agent.waitFor(/palisade-agent listening on/), agent.output());
    agent.child.kill('SIGUSR2');
    const line = await agent.waitFor(/URLS (\[.*\])\n/);
    assert.ok(line, agent.output());
    const urls = JSON.parse(line[1]!) as string[];
    // The probe sees the pattern watch load, so it would see the journal reader too.
    assert.ok(
      urls.some((u) => u.endsWith('/protection/pattern-watch.js')),
      urls.join(' '),
    );
    assert.deepEqual(
      urls.filter((u) => u.endsWith('/protection/journal-tail.js')),
      [],
    );
  } finally {
    await agent.stop();
  }
});
