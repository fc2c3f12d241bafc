// Golden-file tests of the /proc parsers and the sampler, against fixture copies of /proc under
// test/fixtures (expected output beside them, in fixtures/golden). UPDATE_GOLDEN=1 rewrites them.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { type AgentDeps, type FsUsage, realHost } from '../src/deps.js';
import { cpuPercent, parseProcStat } from '../src/measure/collectors/cpu.js';
import { parseMounts, realFilesystems } from '../src/measure/collectors/disks.js';
import { parseLoadavg } from '../src/measure/collectors/load.js';
import { memoryFigures, parseMeminfo } from '../src/measure/collectors/memory.js';
import { networkRates, parseNetDev } from '../src/measure/collectors/network.js';
import { parseUptime } from '../src/measure/collectors/uptime.js';
import { parseOsRelease, publicAddress, readFacts } from '../src/measure/facts.js';
import { Sampler } from '../src/measure/sampler.js';
import type { Collector } from '../src/measure/types.js';

const fixtures = (path: string) => fileURLToPath(new URL(`../../test/fixtures/${path}`, import.meta.url));
const fixture = (path: string) => readFileSync(fixtures(path), 'utf8');

function golden(name: string, actual: unknown) {
  const file = fixtures(`golden/${name}.json`);
  if (process.env.UPDATE_GOLDEN === '1') writeFileSync(file, `${JSON.stringify(actual, null, 2)}\n`);
  assert.deepEqual(JSON.parse(JSON.stringify(actual)), JSON.parse(readFileSync(file, 'utf8')), `golden ${name}`);
}

test('parsers match their golden files', () => {
  golden('proc-stat', parseProcStat(fixture('linux/proc/stat')));
  golden('loadavg', parseLoadavg(fixture('linux/proc/loadavg')));
  golden('meminfo', memoryFigures(parseMeminfo(fixture('linux/proc/meminfo'))));
  golden('mounts', realFilesystems(parseMounts(fixture('linux/proc/mounts'))));
  golden('net-dev', parseNetDev(fixture('linux/proc/net/dev')));
  golden(
    'net-rates',
    networkRates(
      new Map(parseNetDev(fixture('linux/proc/net/dev')).map((c) => [c.name, c])),
      parseNetDev(fixture('linux-later/proc/net/dev')),
      2,
    ),
  );
  assert.equal(parseUptime(fixture('linux/proc/uptime')), 2700);
  assert.equal(parseOsRelease(fixture('linux/etc/os-release')), 'Debian GNU/Linux 12 (bookworm)');
});

test('parsers refuse what they cannot read', () => {
  assert.throws(() => parseProcStat('intr 1 2 3\n'), /no "cpu" line/);
  assert.throws(() => parseLoadavg('x y z'), /unreadable/);
  assert.throws(() => memoryFigures(parseMeminfo('MemFree: 1 kB\n')), /no MemTotal/);
  assert.throws(() => parseUptime(''), /unreadable/);
  assert.deepEqual(parseNetDev('garbage\n'), []);
});

test('cpu percent: busy share between readings, first one against boot', () => {
  const t0 = parseProcStat(fixture('linux/proc/stat'));
  const t1 = parseProcStat(fixture('linux-later/proc/stat'));
  assert.equal(cpuPercent(t0, t1), 30); // 150 busy of 500 jiffies
  assert.equal(cpuPercent(null, t0), 23.2); // 111407 busy of 479741
  assert.equal(cpuPercent(t1, t1), 0);
});

test('public address: the first globally routable one, IPv4-mapped unwrapped', () => {
  assert.equal(publicAddress(['10.0.0.5', 'fe80::1%eth0', '::ffff:198.51.100.1', '8.8.8.8']), '8.8.8.8');
  assert.equal(publicAddress(['10.0.0.5', '2a01:4f8::1']), '2a01:4f8::1');
  assert.equal(publicAddress(['192.168.1.2', '100.64.0.1']), null);
});

/** Reads a fixture file at once, so only the stuck mount ever meets a timer: no race with the clock. */
function readNow(root: string) {
  return (path: string) => {
    try {
      return Promise.resolve(readFileSync(`${root}${path}`, 'utf8'));
    } catch (err) {
      return Promise.reject(err);
    }
  };
}

/** A host made of the fixture files; `advance()` switches /proc/stat and /proc/net/dev to the second reading. */
function fixtureDeps() {
  const base = { ...realHost(fixtures('linux')), read: readNow(fixtures('linux')) };
  const later = { read: readNow(fixtures('linux-later')) };
  let useLater = false;
  const statfsTable = JSON.parse(fixture('linux/statfs.json')) as Record<string, FsUsage | 'stuck'>;
  const statfsCalls: string[] = [];
  let now = 1_700_000_000_000;
  let mono = 1000;
  const deps: AgentDeps = {
    clock: () => now,
    monotonic: () => mono,
    host: {
      ...base,
      platform: 'linux',
      read: (path) =>
        useLater && (path === '/proc/stat' || path === '/proc/net/dev') ? later.read(path) : base.read(path),
      statfs: (path) => {
        statfsCalls.push(path);
        const entry = statfsTable[path];
        if (entry === 'stuck') return new Promise(() => {}); // a hung NFS server
        if (!entry) return Promise.reject(new Error(`ENOENT: ${path}`));
        return Promise.resolve(entry);
      },
      hostname: () => 'web-1',
      machine: () => 'x86_64',
      networkAddresses: () => ['10.0.0.5', 'fe80::1%eth0', '1.1.1.1'],
    },
  };
  return {
    deps,
    statfsCalls,
    advance(ms: number) {
      now += ms;
      mono += ms;
      useLater = true;
    },
  };
}

test('sampler: a round from the fixture host matches the golden sample; a stuck mount does not stall the rest', async () => {
  const f = fixtureDeps();
  const sampler = new Sampler(f.deps, { intervalMs: 2000, history: 2, collectorTimeoutMs: 100 });
  const first = await sampler.measure();
  assert.match(first.errors.disks!, /^statfs \/mnt\/backup: no answer within 50 ms$/);
  f.advance(2000);
  const second = await sampler.measure();
  golden('sample-round2', second);
  assert.deepEqual(
    second.disks!.map((d) => d.mount),
    ['/', '/boot/efi', '/srv/My Data'],
  );
  assert.match(second.errors.disks!, /^statfs \/mnt\/backup: no answer for 2 s \(stuck mount\)$/);
  assert.equal(f.statfsCalls.filter((p) => p === '/mnt/backup').length, 1, 'a stuck mount is not asked again');
  f.advance(2000);
  await sampler.measure();
  assert.equal(sampler.recent().length, 2, 'the ring keeps `history` samples');
  assert.equal(sampler.latest()!.ts, 1_700_000_004_000);
});

test('sampler: a collector that hangs or fails reports an error; the others still serve', async () => {
  const f = fixtureDeps();
  let hangingCalls = 0;
  const hanging: Collector = {
    name: 'network',
    collect: () => {
      hangingCalls++;
      return new Promise(() => {});
    },
  };
  const failing: Collector = {
    name: 'memory',
    collect: () => Promise.reject(new Error("ENOENT: no such file or directory, open '/proc/meminfo'")),
  };
  const steady: Collector = {
    name: 'load',
    collect: async () => ({ value: { load1: 1.37, load5: 1.11, load15: 0.83 } }),
  };
  const sampler = new Sampler(f.deps, { intervalMs: 2000, history: 5, collectorTimeoutMs: 30 }, [
    hanging,
    failing,
    steady,
  ]);
  const first = await sampler.measure();
  assert.deepEqual(first.load, { load1: 1.37, load5: 1.11, load15: 0.83 });
  assert.equal(first.errors.network, 'no answer within 30 ms');
  assert.match(first.errors.memory!, /ENOENT/);
  assert.equal(first.network, null);
  f.advance(2000);
  const second = await sampler.measure();
  assert.match(second.errors.network!, /previous reading has not finished after 2 s; skipped/);
  assert.equal(hangingCalls, 1);
  assert.deepEqual(second.load, first.load);
});

test('other platforms: the agent measures what it can and names what is unavailable', async () => {
  const host = realHost(fixtures('linux'), 'darwin');
  const deps: AgentDeps = { clock: () => 1, monotonic: () => 1, host };
  const sample = await new Sampler(deps, { intervalMs: 2000, history: 1, collectorTimeoutMs: 30_000 }).measure();
  assert.equal(sample.errors.network, 'unavailable on darwin (reads /proc/net/dev)');
  assert.equal(sample.errors.memory, 'swap: unavailable on darwin');
  assert.match(sample.errors.disks!, /only \/ is measured on darwin/);
  assert.equal(sample.errors.cpu, undefined);
  assert.equal(typeof sample.cpu!.pct, 'number');
  assert.ok(sample.memory!.total_mb > 0);
  assert.equal(sample.memory!.swap_total_mb, null);
  assert.equal(sample.disks!.length, 1);
  assert.equal(sample.network, null);
});

test('facts come from the fixture host; a configured public IP wins', async () => {
  const f = fixtureDeps();
  golden('facts', await readFacts(f.deps, null));
  assert.equal((await readFacts(f.deps, '198.51.100.7')).public_ip, '198.51.100.7');
});
