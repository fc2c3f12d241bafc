// `palisade-agent bench` as a real process: a short local run, its JSON and its text.
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { benchmarkReport, scoreBenchmark } from '@palisade/protocol';
import { runCli, tempDir, writeConfig } from './agent-process.js';

test('palisade-agent bench --quick --json prints a valid report and its scores, and leaves no file', async () => {
  const dir = tempDir('palisade-bench-cli-');
  try {
    const config = join(dir.path, 'agent.conf');
    writeConfig(config, { 'bench.dir': dir.path, 'bench.max_disk_mb': '16' });
    const res = await runCli(['bench', '--quick', '--json', '--config', config, '--state-dir', join(dir.path, 'none')]);
    assert.equal(res.code, 0, res.out);
    const { report, scores } = JSON.parse(res.stdout);
    const parsed = benchmarkReport.parse(report);
    assert.deepEqual(scores, scoreBenchmark(parsed.measurements));
    assert.equal(parsed.measurements.network, null);
    assert.match(parsed.skipped.network!, /without a console/);
    assert.ok(parsed.measurements.cpu, `cpu measured: ${res.stderr}`);
    assert.ok(parsed.measurements.disk, `disk measured: ${res.stderr}`);
    assert.ok(parsed.measurements.stability, `stability measured: ${res.stderr}`);
    assert.ok(parsed.hardware.cores >= 1);
    assert.match(res.stderr, /disk: wrote \d+ MB with fsync/);
    assert.deepEqual(readdirSync(dir.path), ['agent.conf']);
  } finally {
    dir.remove();
  }
});

test('palisade-agent bench prints one line per section; a bad config exits 1 naming the line', async () => {
  const dir = tempDir('palisade-bench-cli-');
  try {
    const config = join(dir.path, 'agent.conf');
    writeConfig(config, { 'bench.max_disk_mb': '16' });
    const res = await runCli(['bench', '--quick', '--config', config, '--state-dir', dir.path]);
    assert.equal(res.code, 0, res.out);
    for (const row of ['cpu', 'disk', 'network', 'stability', 'total', 'hardware']) {
      assert.match(res.stdout, new RegExp(`^${row} +\\S`, 'm'));
    }
    assert.match(res.stdout, /^network +not measured: /m);
    writeConfig(config, { 'bench.max_seconds': '1' });
    const bad = await runCli(['bench', '--config', config]);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /agent\.conf:1: bad value for bench\.max_seconds/);
  } finally {
    dir.remove();
  }
});
