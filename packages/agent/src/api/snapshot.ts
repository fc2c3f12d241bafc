import type { AgentMetrics } from '@palisade/protocol/agent-api';
import type { SnapshotParts } from '../checkin/body.js';

export type MetricsSnapshot = ReturnType<typeof metricsSnapshot>;

/** The /metrics body. Parts whose collector failed keep their shape with null figures. */
export function metricsSnapshot(p: SnapshotParts) {
  const { sample: s, facts } = p;
  return {
    ts: s.ts,
    agent: { version: p.version, uptime_s: p.agentUptimeS },
    host: {
      hostname: facts.hostname,
      os: facts.os,
      kernel: facts.kernel,
      arch: facts.arch,
      cores: facts.cores,
      mem_total_mb: facts.mem_total_mb,
      public_ip: facts.public_ip,
      uptime_s: s.uptime_s,
    },
    cpu: {
      pct: s.cpu?.pct ?? null,
      load1: s.load?.load1 ?? null,
      load5: s.load?.load5 ?? null,
      load15: s.load?.load15 ?? null,
    },
    memory: {
      total_mb: s.memory?.total_mb ?? null,
      used_mb: s.memory?.used_mb ?? null,
      pct: s.memory?.pct ?? null,
      swap_total_mb: s.memory?.swap_total_mb ?? null,
      swap_used_mb: s.memory?.swap_used_mb ?? null,
    },
    disks: s.disks ?? [],
    network: s.network ?? { rx_bps: null, tx_bps: null, rx_pps: null, tx_pps: null, interfaces: [] },
    protection: p.protection,
    attacks: p.attacks,
    alerter: { ...p.alerter },
    checkin: { ...p.checkin },
    errors: s.errors,
  };
}

/** The snapshot is the contract's `/metrics` (packages/protocol/src/agent-api.ts): checked when compiling. */
export const snapshotConforms: (p: SnapshotParts) => AgentMetrics = metricsSnapshot;
