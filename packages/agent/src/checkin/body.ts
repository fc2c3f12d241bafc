import type { CheckinRequest } from '@palisade/protocol/checkin';
import type { AlerterState } from '../alerter/alerter.js';
import type { HostFacts, Sample } from '../measure/types.js';
import type { AttackCounts, ProtectionState } from '../protection/provider.js';
import type { CheckinStatus } from './checkin.js';

/** Everything the agent reports, gathered from memory: the check-in body here, /metrics and Prometheus in api/. */
export interface SnapshotParts {
  version: string;
  agentUptimeS: number;
  facts: HostFacts;
  sample: Sample;
  protection: ProtectionState;
  attacks: AttackCounts;
  alerter: AlerterState;
  checkin: CheckinStatus;
}

/** The check-in body the console expects (docs/fleet.md, "Check-ins"); required figures fall back to 0 when unmeasured. */
export function checkinBody(p: SnapshotParts): CheckinRequest {
  const { sample: s, facts } = p;
  const fullest = (s.disks ?? []).reduce<{ mount: string; pct: number } | null>(
    (a, d) => (a === null || d.pct > a.pct ? d : a),
    null,
  );
  const errorsTotal = (s.network?.interfaces ?? []).reduce(
    (sum, i) => sum + i.rx_errors + i.tx_errors + i.rx_drops + i.tx_drops,
    0,
  );
  const errorText = Object.entries(s.errors)
    .map(([k, v]) => `${k}: ${v}`)
    .join('; ');
  return {
    agent_version: p.version,
    hostname: facts.hostname,
    public_ip: facts.public_ip,
    facts: {
      os: facts.os,
      kernel: facts.kernel,
      cores: facts.cores,
      arch: facts.arch,
      mem_total_mb: facts.mem_total_mb,
      disks: (s.disks ?? []).map((d) => ({ mount: d.mount, fs: d.fs, total_mb: d.total_mb })),
    },
    sample: {
      ts: s.ts,
      cpu_pct: s.cpu?.pct ?? 0,
      mem_used_mb: s.memory?.used_mb ?? 0,
      mem_total_mb: s.memory?.total_mb ?? facts.mem_total_mb,
      disk_used_pct: fullest?.pct ?? 0,
      disk_mount: fullest?.mount ?? null,
      load1: s.load?.load1 ?? 0,
      load5: s.load?.load5 ?? null,
      load15: s.load?.load15 ?? null,
      rx_bps: s.network?.rx_bps ?? 0,
      tx_bps: s.network?.tx_bps ?? 0,
      rx_pps: s.network?.rx_pps ?? null,
      tx_pps: s.network?.tx_pps ?? null,
      net_errors_ps: s.network ? Math.round(errorsTotal * 10) / 10 : null,
      swap_used_mb: s.memory?.swap_used_mb ?? null,
      uptime_s: s.uptime_s,
      // The fleet page counts servers under attack from this (docs/fleet.md, "Server states"), and
      // attack alert rules read both counts (docs/alerts.md), so no alerter URL needs setting on the server.
      attacks_active: p.attacks.active,
      attacks_total: p.attacks.total,
      ...(errorText ? { collector_errors: errorText.slice(0, 256) } : {}),
    },
    protection: p.protection,
    alerter: { ...p.alerter },
  };
}
