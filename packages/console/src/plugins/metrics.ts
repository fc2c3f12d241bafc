import type { FastifyInstance } from 'fastify';
import { routeOf } from './request-guards.js';

/**
 * The console's own figures in the Prometheus text format (docs/deploy.md, "Metrics"), kept by hand:
 * counters and histograms bumped on the hot path (a Map lookup each), gauges read when scraped.
 * A snapshot is plain data, so a cluster primary can gather its workers' snapshots over IPC and
 * serve them as one page, each sample labelled with its worker.
 */
export type Labels = Readonly<Record<string, string>>;

export interface Sample {
  /** '' for counters and gauges; `_bucket`, `_sum` or `_count` for a histogram's series. */
  suffix: string;
  labels: Labels;
  value: number;
}

export interface Family {
  name: string;
  help: string;
  type: 'counter' | 'gauge' | 'histogram';
  samples: Sample[];
}

type Collect = () => Promise<Array<{ labels: Labels; value: number }>> | Array<{ labels: Labels; value: number }>;

/** Each label set's series key, made once per object: the hot path passes the same objects again. */
const keys = new WeakMap<Labels, string>();
function key(labels: Labels): string {
  let k = keys.get(labels);
  if (k === undefined) {
    k = JSON.stringify(labels);
    keys.set(labels, k);
  }
  return k;
}

export class MetricsRegistry {
  private readonly families: Array<() => Promise<Family>> = [];

  counter(name: string, help: string) {
    const values = new Map<string, { labels: Labels; value: number }>();
    this.families.push(async () => ({ name, help, type: 'counter', samples: [...values.values()].map(plain) }));
    return {
      inc(labels: Labels = {}, by = 1) {
        const k = key(labels);
        const entry = values.get(k);
        if (entry) entry.value += by;
        else values.set(k, { labels, value: by });
      },
    };
  }

  /** `buckets` are upper bounds in seconds, ascending; `+Inf` is added. */
  histogram(name: string, help: string, buckets: readonly number[]) {
    const series = new Map<string, { labels: Labels; counts: number[]; sum: number; count: number }>();
    this.families.push(async () => ({
      name,
      help,
      type: 'histogram',
      samples: [...series.values()].flatMap((s) => [
        ...buckets.map((le, i) => ({
          suffix: '_bucket',
          labels: { ...s.labels, le: String(le) },
          value: s.counts[i]!,
        })),
        { suffix: '_bucket', labels: { ...s.labels, le: '+Inf' }, value: s.count },
        { suffix: '_sum', labels: s.labels, value: s.sum },
        { suffix: '_count', labels: s.labels, value: s.count },
      ]),
    }));
    return {
      observe(labels: Labels, seconds: number) {
        const k = key(labels);
        let s = series.get(k);
        if (!s) {
          s = { labels, counts: buckets.map(() => 0), sum: 0, count: 0 };
          series.set(k, s);
        }
        // Cumulative buckets: every bound at or above the value counts it.
        for (let i = buckets.length - 1; i >= 0 && seconds <= buckets[i]!; i--) s.counts[i]!++;
        s.sum += seconds;
        s.count++;
      },
    };
  }

  /** A value read at scrape time; a collector that fails leaves its family empty, the others still serve. */
  gauge(name: string, help: string, collect: Collect, type: 'gauge' | 'counter' = 'gauge') {
    this.families.push(async () => {
      try {
        return { name, help, type, samples: (await collect()).map(plain) };
      } catch {
        return { name, help, type, samples: [] };
      }
    });
  }

  async snapshot(): Promise<Family[]> {
    return Promise.all(this.families.map((family) => family()));
  }
}

const plain = (s: { labels: Labels; value: number }): Sample => ({ suffix: '', labels: s.labels, value: s.value });

const escapeLabel = (v: string) => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');

function formatValue(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Number.POSITIVE_INFINITY) return '+Inf';
  if (v === Number.NEGATIVE_INFINITY) return '-Inf';
  return String(v);
}

/** The text exposition format (version 0.0.4). */
export function renderMetrics(families: readonly Family[]): string {
  const lines: string[] = [];
  for (const f of families) {
    lines.push(`# HELP ${f.name} ${f.help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')}`, `# TYPE ${f.name} ${f.type}`);
    for (const s of f.samples) {
      const labels = Object.entries(s.labels).map(([k, v]) => `${k}="${escapeLabel(v)}"`);
      lines.push(`${f.name}${s.suffix}${labels.length ? `{${labels.join(',')}}` : ''} ${formatValue(s.value)}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

/** Several processes' snapshots as one: each sample gets a `worker` label, each family is listed once. */
export function mergeWorkerSnapshots(snapshots: ReadonlyArray<{ worker: string; families: Family[] }>): Family[] {
  const merged = new Map<string, Family>();
  for (const { worker, families } of snapshots) {
    for (const f of families) {
      let into = merged.get(f.name);
      if (!into) {
        into = { name: f.name, help: f.help, type: f.type, samples: [] };
        merged.set(f.name, into);
      }
      for (const s of f.samples) into.samples.push({ ...s, labels: { worker, ...s.labels } });
    }
  }
  return [...merged.values()];
}

export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** Latency bounds in seconds: from a cached read to a slow agent call. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** The agents' check-in route: its successful answers are the check-ins counted. */
const CHECKIN_ROUTE = '/api/agent/checkin';

declare module 'fastify' {
  interface FastifyInstance {
    metrics: MetricsRegistry;
  }
}

/**
 * Counts every answer by method, the route the router matched (its pattern, never the raw URL, so
 * ids and probing paths do not make new series; no match is `unmatched`) and status class.
 */
export function registerRequestMetrics(app: FastifyInstance) {
  const metrics = new MetricsRegistry();
  app.decorate('metrics', metrics);
  const requests = metrics.counter(
    'palisade_http_requests_total',
    'HTTP answers by method, matched route and status class',
  );
  const latency = metrics.histogram(
    'palisade_http_request_duration_seconds',
    'Time from request to answer by method, matched route and status class',
    LATENCY_BUCKETS,
  );
  const checkins = metrics.counter('palisade_checkins_total', 'Agent check-ins accepted (rate() gives check-ins/s)');
  const labelsCache = new Map<string, Labels>();
  app.addHook('onResponse', (request, reply, done) => {
    const route = routeOf(request).url ?? 'unmatched';
    const status = `${Math.floor(reply.statusCode / 100)}xx`;
    const k = `${request.method} ${route} ${status}`;
    let labels = labelsCache.get(k);
    if (!labels) {
      labels = { method: request.method, route, status };
      labelsCache.set(k, labels);
    }
    requests.inc(labels);
    latency.observe(labels, reply.elapsedTime / 1000);
    if (route === CHECKIN_ROUTE && reply.statusCode < 300) checkins.inc();
    done();
  });
  return metrics;
}
