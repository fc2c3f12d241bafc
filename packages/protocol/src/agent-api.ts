import { z } from 'zod';

/**
 * What the agent's own API answers (docs/agent.md, "Metrics API"): `/health` and the `/metrics`
 * snapshot, which the console's metrics proxy passes on and the SDK's AgentClient returns. A figure
 * whose collector failed is null (and `errors` says why). The agent imports only the types.
 */
export const agentHealthSchema = z.object({
  status: z.literal('ok'),
  version: z.string(),
  uptime_s: z.number().int().nonnegative(),
});
export type AgentHealth = z.infer<typeof agentHealthSchema>;

const figure = z.number().nullable();
const diskSchema = z.object({
  mount: z.string(),
  fs: z.string(),
  total_mb: z.number(),
  used_mb: z.number(),
  pct: z.number(),
});
const interfaceSchema = z.object({
  name: z.string(),
  rx_bps: z.number(),
  tx_bps: z.number(),
  rx_pps: z.number(),
  tx_pps: z.number(),
  rx_errors: z.number(),
  tx_errors: z.number(),
  rx_drops: z.number(),
  tx_drops: z.number(),
});
/** Parts another document describes in full (protection.md, agent.md): objects here, not spelled out. */
const part = z.record(z.string(), z.unknown());

export const agentMetricsSchema = z.object({
  ts: z.number().int().positive(),
  agent: z.object({ version: z.string(), uptime_s: z.number().int().nonnegative() }),
  host: z.object({
    hostname: z.string(),
    os: z.string(),
    kernel: z.string(),
    arch: z.string(),
    cores: z.number().int().positive(),
    mem_total_mb: z.number(),
    public_ip: z.string().nullable(),
    uptime_s: figure,
  }),
  cpu: z.object({ pct: figure, load1: figure, load5: figure, load15: figure }),
  memory: z.object({
    total_mb: figure,
    used_mb: figure,
    pct: figure,
    swap_total_mb: figure,
    swap_used_mb: figure,
  }),
  disks: z.array(diskSchema),
  network: z.object({
    rx_bps: figure,
    tx_bps: figure,
    rx_pps: figure,
    tx_pps: figure,
    interfaces: z.array(interfaceSchema),
  }),
  protection: part,
  attacks: part,
  alerter: part,
  checkin: part,
  errors: z.record(z.string(), z.string()),
});
export type AgentMetrics = z.infer<typeof agentMetricsSchema>;
