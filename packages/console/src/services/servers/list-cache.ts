import type { Database } from '../../db/schema.js';
import { listServerSummaries } from '../../repositories/servers.repository.js';
import type { Coherence } from '../coherence/index.js';
import { serverSummary, summaryExpiresAt } from './views.js';

/** Accounts whose v1 list is kept; past this many the oldest half goes. */
const MAX_CACHED_LISTS = 10_000;

interface CachedList {
  /** UTF-8 bytes: a string would be encoded again by every socket write. */
  body: Buffer;
  builtAt: number;
  /** The first instant at which time alone may change the answer. */
  expiresAt: number;
}

/** The v1 list answers kept in memory, by account. */
function createListCache(changes: Pick<Coherence, 'onChange'>) {
  const entries = new Map<number, CachedList>();
  /** Bumped by every change: an answer built while one happened is not kept. */
  let generation = 0;
  const counts = { hits: 0, misses: 0, expired: 0 };
  changes.onChange((accountId) => {
    generation += 1;
    if (accountId === null) entries.clear();
    else entries.delete(accountId);
  });
  return {
    generation: () => generation,
    get(accountId: number, now: number): Buffer | undefined {
      const entry = entries.get(accountId);
      if (entry && now >= entry.builtAt && now < entry.expiresAt) {
        counts.hits += 1;
        return entry.body;
      }
      if (entry) counts.expired += 1;
      counts.misses += 1;
      return undefined;
    },
    set(accountId: number, entry: CachedList) {
      if (entries.size >= MAX_CACHED_LISTS && !entries.has(accountId)) {
        let drop = entries.size / 2;
        for (const key of entries.keys()) {
          if (drop-- <= 0) break;
          entries.delete(key);
        }
      }
      entries.set(accountId, entry);
    },
    stats: () => ({ ...counts, size: entries.size }),
  };
}

/**
 * The v1 list's whole answer as UTF-8 JSON bytes, from memory while nothing changed it: entries are
 * dropped by services/coherence/ and expire when time alone would change them (summaryExpiresAt).
 * docs/performance.md, "v1 reads from memory".
 */
export function createListAnswers({
  db,
  clock,
  changes,
}: {
  db: Database;
  clock: () => number;
  changes: Pick<Coherence, 'onChange' | 'ready'>;
}) {
  const answers = createListCache(changes);
  async function build(accountId: number, now: number, usable: boolean): Promise<Buffer> {
    const began = answers.generation();
    let expiresAt = Number.POSITIVE_INFINITY;
    const servers = (await listServerSummaries(db, accountId)).map((row) => {
      expiresAt = Math.min(expiresAt, summaryExpiresAt(row, now));
      return serverSummary(row, now);
    });
    const body = Buffer.from(JSON.stringify({ data: { servers } }));
    if (usable && began === answers.generation()) answers.set(accountId, { body, builtAt: now, expiresAt });
    return body;
  }
  return {
    /** The answer itself when memory holds it (no I/O, no promise), else a promise of it built anew. */
    answer(accountId: number): Buffer | Promise<Buffer> {
      const now = clock();
      const usable = changes.ready();
      const cached = usable ? answers.get(accountId, now) : undefined;
      return cached ?? build(accountId, now, usable);
    },
    stats: () => answers.stats(),
  };
}
