/** Keys read by one query at most. */
const MAX_KEYS = 500;

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
    const keys = [...batch.keys()];
    // At most MAX_KEYS a query, far below either dialect's limit on parameters.
    for (let i = 0; i < keys.length; i += MAX_KEYS) {
      const part = keys.slice(i, i + MAX_KEYS);
      try {
        const found = await load(part);
        for (const key of part) for (const c of batch.get(key)!) c.resolve(found.get(key));
      } catch (err) {
        for (const key of part) for (const c of batch.get(key)!) c.reject(err);
      }
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
