// One benchmark worker thread: hashes or deflates an in-memory block for fixed-time rounds and
// reports the bytes processed per round. Runs off the daemon's event loop, one per core.
import { createHash } from 'node:crypto';
import { parentPort } from 'node:worker_threads';
import { deflateSync } from 'node:zlib';
import { benchBlock, type CpuRoundsRequest, type CpuRoundsResult } from './cpu-work.js';

const block = benchBlock(1 << 20);
const deflateBlock = block.subarray(0, 256 * 1024);

function round(task: CpuRoundsRequest['task'], ms: number): { bytes: number; ms: number } {
  const start = performance.now();
  let bytes = 0;
  let elapsed = 0;
  if (task === 'sha256') {
    const hash = createHash('sha256');
    do {
      hash.update(block);
      bytes += block.length;
      elapsed = performance.now() - start;
    } while (elapsed < ms);
    hash.digest();
  } else {
    do {
      deflateSync(deflateBlock);
      bytes += deflateBlock.length;
      elapsed = performance.now() - start;
    } while (elapsed < ms);
  }
  return { bytes, ms: elapsed };
}

const port = parentPort;
if (port) {
  port.on('message', (req: CpuRoundsRequest) => {
    round(req.task, Math.min(20, req.roundMs)); // warm-up, not reported
    const result: CpuRoundsResult = { bytes: [], ms: [] };
    for (let i = 0; i < req.rounds; i++) {
      const r = round(req.task, req.roundMs);
      result.bytes.push(r.bytes);
      result.ms.push(r.ms);
    }
    port.postMessage(result);
  });
  port.postMessage('ready');
}
