import type { MetricsSnapshot } from './snapshot.js';

/** Label values escaped as the text exposition format requires. */
const esc = (v: string) => v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');

function labels(l: Record<string, string>): string {
  const parts = Object.entries(l).map(([k, v]) => `${k}="${esc(v)}"`);
  return parts.length > 0 ? `{${parts.join(',')}}` : '';
}

/**
 * The /metrics snapshot in the Prometheus text format (version 0.0.4). Same figures, base units
 * (bytes, seconds); figures a collector could not measure are left out rather than reported as 0.
 */
export function prometheusText(m: MetricsSnapshot): string {
  const out: string[] = [];
  const family = (
    name: string,
    type: 'gauge' | 'counter',
    help: string,
    rows: [Record<string, string>, number | null][],
  ) => {
    const present = rows.filter((r): r is [Record<string, string>, number] => r[1] !== null && Number.isFinite(r[1]));
    if (present.length === 0) return;
    out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    for (const [l, v] of present) out.push(`${name}${labels(l)} ${v}`);
  };
  const MB = 1048576;
  const bytes = (v: number | null) => (v === null ? null : v * MB);
  const one = (v: number | null): [Record<string, string>, number | null][] => [[{}, v]];

  family('palisade_agent_info', 'gauge', 'Agent version.', [[{ version: m.agent.version }, 1]]);
  family('palisade_agent_uptime_seconds', 'gauge', 'Seconds since the agent started.', one(m.agent.uptime_s));
  family('palisade_host_info', 'gauge', 'Host facts.', [
    [{ hostname: m.host.hostname, os: m.host.os, kernel: m.host.kernel, arch: m.host.arch }, 1],
  ]);
  family('palisade_host_cores', 'gauge', 'CPU cores.', one(m.host.cores));
  family('palisade_host_uptime_seconds', 'gauge', 'Seconds since the host booted.', one(m.host.uptime_s));
  family('palisade_sample_timestamp_seconds', 'gauge', 'When the figures were measured.', one(m.ts / 1000));
  family('palisade_cpu_usage_percent', 'gauge', 'CPU busy share over the last interval, all cores.', one(m.cpu.pct));
  family('palisade_load1', 'gauge', '1-minute load average.', one(m.cpu.load1));
  family('palisade_load5', 'gauge', '5-minute load average.', one(m.cpu.load5));
  family('palisade_load15', 'gauge', '15-minute load average.', one(m.cpu.load15));
  family('palisade_memory_total_bytes', 'gauge', 'Physical memory.', one(bytes(m.memory.total_mb)));
  family('palisade_memory_used_bytes', 'gauge', 'Memory in use (total minus available).', one(bytes(m.memory.used_mb)));
  family('palisade_swap_total_bytes', 'gauge', 'Swap space.', one(bytes(m.memory.swap_total_mb)));
  family('palisade_swap_used_bytes', 'gauge', 'Swap in use.', one(bytes(m.memory.swap_used_mb)));
  const fsRows = (f: (d: MetricsSnapshot['disks'][number]) => number) =>
    m.disks.map((d): [Record<string, string>, number] => [{ mount: d.mount, fstype: d.fs }, f(d)]);
  family(
    'palisade_filesystem_size_bytes',
    'gauge',
    'Filesystem size.',
    fsRows((d) => d.total_mb * MB),
  );
  family(
    'palisade_filesystem_used_bytes',
    'gauge',
    'Filesystem space in use.',
    fsRows((d) => d.used_mb * MB),
  );
  family(
    'palisade_filesystem_used_percent',
    'gauge',
    'Share in use, as df shows it.',
    fsRows((d) => d.pct),
  );
  const nic = (f: (i: MetricsSnapshot['network']['interfaces'][number]) => number) =>
    m.network.interfaces.map((i): [Record<string, string>, number] => [{ interface: i.name }, f(i)]);
  family(
    'palisade_network_receive_bytes_per_second',
    'gauge',
    'Received bytes per second.',
    nic((i) => i.rx_bps),
  );
  family(
    'palisade_network_transmit_bytes_per_second',
    'gauge',
    'Sent bytes per second.',
    nic((i) => i.tx_bps),
  );
  family(
    'palisade_network_receive_packets_per_second',
    'gauge',
    'Received packets per second.',
    nic((i) => i.rx_pps),
  );
  family(
    'palisade_network_transmit_packets_per_second',
    'gauge',
    'Sent packets per second.',
    nic((i) => i.tx_pps),
  );
  family(
    'palisade_network_receive_errors_per_second',
    'gauge',
    'Receive errors per second.',
    nic((i) => i.rx_errors),
  );
  family(
    'palisade_network_transmit_errors_per_second',
    'gauge',
    'Send errors per second.',
    nic((i) => i.tx_errors),
  );
  family(
    'palisade_network_receive_drops_per_second',
    'gauge',
    'Dropped received packets per second.',
    nic((i) => i.rx_drops),
  );
  family(
    'palisade_network_transmit_drops_per_second',
    'gauge',
    'Dropped outgoing packets per second.',
    nic((i) => i.tx_drops),
  );
  // The collector names of docs/agent.md ("Measuring"), as `errors` keys them.
  const collectors = ['cpu', 'load', 'memory', 'disks', 'network', 'uptime'];
  family(
    'palisade_collector_success',
    'gauge',
    '1 when the collector measured without error in the last round.',
    collectors.map((c) => [{ collector: c }, m.errors[c] === undefined ? 1 : 0]),
  );
  family('palisade_attacks_active', 'gauge', 'Attacks in progress.', one(m.attacks.active));
  family('palisade_attacks_total', 'counter', 'Attacks detected since start.', one(m.attacks.total));
  family('palisade_alerter_webhook_set', 'gauge', '1 when alerter.url is set.', one(m.alerter.webhook_set ? 1 : 0));
  family('palisade_alerter_queued', 'gauge', 'Events waiting for delivery.', one(m.alerter.queued));
  family('palisade_alerter_sent_total', 'counter', 'Events delivered.', one(m.alerter.sent));
  family('palisade_alerter_dropped_total', 'counter', 'Events discarded before delivery.', one(m.alerter.dropped));
  // Left out until the first delivery succeeds (no sample beats a made-up 0).
  family(
    'palisade_alerter_last_success_timestamp_seconds',
    'gauge',
    'Last successful delivery.',
    one(m.alerter.last_success_at === null ? null : m.alerter.last_success_at / 1000),
  );
  return `${out.join('\n')}\n`;
}
