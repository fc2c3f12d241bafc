// One benchmark worker thread: hashes or deflates an in-memory block for fixed-time rounds and
// reports the bytes processed per round. Runs off the daemon's event loop, one per core.
//
// The worker is started from this function's source text (`new Worker(src, { eval: true })`), so
// the same code runs from dist/, from the one-file bundle and from the single executable, none of
// which needs a worker file beside it (docs/decisions.md, "Packaging"). Hence the function uses
// no imports and no outer names: modules come from process.getBuiltinModule, the block from
// workerData.
import type { CpuRoundsRequest, CpuRoundsResult } from './cpu-work.js';

/** What the main thread passes in `workerData`: the block to hash (the first 256 KiB is deflated). */
export interface CpuWorkerData {
  block: Uint8Array;
}

export function cpuWorkerMain(): void {
  const { createHash } = process.getBuiltinModule('node:crypto');
  const { parentPort, workerData } = process.getBuiltinModule('node:worker_threads');
  const { deflateSync } = process.getBuiltinModule('node:zlib');
  const block = (workerData as CpuWorkerData).block;
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
  if (!port) return;
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

/** The worker's source, ready for `new Worker(…, { eval: true })`. */
export const cpuWorkerSource = `(${cpuWorkerMain.toString()})();`;
