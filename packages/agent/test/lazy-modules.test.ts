// An idle agent with TLS off, geo off, no outbound link and no benchmark running carries none of
// the modules only those need (docs/performance.md, "Agent memory"): a static import added back
// anywhere on the daemon's path loads them at start again, and this test says which.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
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
