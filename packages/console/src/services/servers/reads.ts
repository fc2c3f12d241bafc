import { badRequest } from '../../errors.js';
import { listDoneRuns, listRuns } from '../../repositories/benchmarks.repository.js';
import { fleetCpuBuckets } from '../../repositories/samples.repository.js';
import { latestSamples, listServerSummaries } from '../../repositories/servers.repository.js';
import type { ServersContext, Viewer } from './context.js';
import { type HistoryRange, serverHistory } from './history.js';
import { createListAnswers } from './list-cache.js';
import { fleetTrends, TREND_BUCKET_MS, TREND_WINDOW_MS } from './trends.js';
import {
  dashboardSummary,
  doneRunView,
  factsSection,
  fleetCounts,
  runView,
  scoreSection,
  serverDetail,
  serverSummary,
} from './views.js';

const SECTIONS = 'overview, score, history, benchmarks, attacks, facts';

/** What the dashboard and the v1 API read about servers: the lists, one server, and its page's sections. */
export function createServerReads(ctx: ServersContext) {
  const { db, clock, agents, lateAfter } = ctx;
  const answers = createListAnswers({ db, clock, changes: ctx.changes });

  return {
    /** The v1 list. */
    async list(accountId: number) {
      const now = clock();
      return (await listServerSummaries(db, accountId)).map((row) => serverSummary(row, now));
    },

    /** The v1 list's whole answer as UTF-8 JSON bytes, from memory while nothing changed it (list-cache.ts). */
    listAnswer: (accountId: number) => answers.answer(accountId),

    /** The v1 answers served from memory and built anew, for /metrics. */
    listCacheStats: () => answers.stats(),

    /** The dashboard's fleet list: each server with its state, and the counts by state. */
    async fleet(accountId: number, filter: { tag?: string } = {}) {
      const now = clock();
      const servers = (await listServerSummaries(db, accountId))
        .map((row) => dashboardSummary(row, now, lateAfter))
        .filter((s) => filter.tag === undefined || s.tags.includes(filter.tag));
      return { servers, counts: fleetCounts(servers) };
    },

    /** The fleet table's figures now and last-hour CPU per server: two queries for the whole fleet. */
    async trends(accountId: number) {
      const now = clock();
      const since = (Math.floor(now / TREND_BUCKET_MS) + 1) * TREND_BUCKET_MS - TREND_WINDOW_MS;
      const [servers, buckets] = await Promise.all([
        latestSamples(db, accountId),
        fleetCpuBuckets(db, accountId, since, TREND_BUCKET_MS),
      ]);
      return fleetTrends(servers, buckets, now);
    },

    /** The v1 detail. */
    async detail(accountId: number, id: number) {
      return serverDetail(await agents.requireServer(accountId, id), clock());
    },

    /** Finished runs only, newest first; never the log or the run token (v1). */
    async doneBenchmarks(accountId: number, id: number) {
      const row = await agents.requireServer(accountId, id);
      return (await listDoneRuns(db, row.id)).map(doneRunView);
    },

    /** The dashboard's view of one server. */
    async get(accountId: number, id: number) {
      return ctx.serverView(await agents.requireServer(accountId, id), clock());
    },

    /** One section of the dashboard's server page. */
    async section(viewer: Viewer, id: number, name: string, range: HistoryRange) {
      // The agent's attack list is read through the control API, so it needs what reading that needs.
      const row = await ctx.serverFor(viewer, id, name === 'attacks' ? 'control.read' : undefined);
      const now = clock();
      switch (name) {
        case 'overview':
          return ctx.serverView(row, now);
        case 'score':
          return scoreSection(row, now, lateAfter);
        case 'facts':
          return factsSection(row);
        case 'history':
          return serverHistory(db, row.id, range, now);
        case 'benchmarks':
          return { runs: (await listRuns(db, row.id)).map(runView) };
        case 'attacks':
          return agents.proxy.attacks(row);
        default:
          throw badRequest(`name: expected one of ${SECTIONS}`);
      }
    },
  };
}
