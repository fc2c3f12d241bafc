/** Two: while one read is out, the next can be gathered and sent (as the rate limits' batches). */
const READS_IN_FLIGHT = 2;

/**
 * Reads of the shared change counter for requests, in batches: the calls made in one turn of the
 * event loop, or while two reads are out, share the next read. That read starts after every call
 * it answers was made, so it counts every change published before any of them; a read already
 * out is never shared, as it may have started before the call.
 */
export function counterReads(read: () => Promise<number>) {
  let waiting: Array<{ resolve(n: number): void; reject(err: unknown): void }> = [];
  let scheduled = false;
  let inFlight = 0;
  let reads = 0;

  function schedule() {
    if (scheduled || inFlight >= READS_IN_FLIGHT || waiting.length === 0) return;
    scheduled = true;
    setImmediate(flush);
  }

  function flush() {
    scheduled = false;
    const batch = waiting;
    waiting = [];
    inFlight += 1;
    reads += 1;
    read()
      .then(
        (n) => {
          for (const w of batch) w.resolve(n);
        },
        (err: unknown) => {
          for (const w of batch) w.reject(err);
        },
      )
      .finally(() => {
        inFlight -= 1;
        schedule();
      });
  }

  return {
    /** The counter as read by a round trip that starts after this call. */
    next(): Promise<number> {
      return new Promise((resolve, reject) => {
        waiting.push({ resolve, reject });
        schedule();
      });
    },
    /** Round trips made, for /metrics. */
    reads: () => reads,
  };
}
