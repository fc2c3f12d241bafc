/**
 * Reads by key, batched: the keys asked for within one turn of the event loop are read with one
 * query (`load`, which answers a value for each key it found), and each caller gets its own value.
 * For the check-in path, where every request would otherwise take its own round trip for a small
 * indexed read (docs/performance.md, "Check-in ingest and capacity").
 */
export function createBatchLoader<K, V>(load: (keys: K[]) => Promise<Map<K, V>>) {
  let waiting = new Map<K, { resolve: (v: V | undefined) => void; reject: (err: unknown) => void }[]>();

  async function run() {
    const batch = waiting;
    waiting = new Map();
    try {
      const found = await load([...batch.keys()]);
      for (const [key, callers] of batch) for (const c of callers) c.resolve(found.get(key));
    } catch (err) {
      for (const callers of batch.values()) for (const c of callers) c.reject(err);
    }
  }

  return (key: K): Promise<V | undefined> =>
    new Promise((resolve, reject) => {
      if (waiting.size === 0) setImmediate(() => void run());
      const callers = waiting.get(key);
      if (callers) callers.push({ resolve, reject });
      else waiting.set(key, [{ resolve, reject }]);
    });
}
