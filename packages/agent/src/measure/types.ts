/** Figures of one measuring round, in the units of the /metrics snapshot. */
export interface CpuFigures {
  pct: number;
}

export interface LoadFigures {
  load1: number;
  load5: number;
  load15: number;
}

export interface MemoryFigures {
  total_mb: number;
  used_mb: number;
  pct: number;
  swap_total_mb: number | null;
  swap_used_mb: number | null;
}

export interface DiskFigures {
  mount: string;
  fs: string;
  total_mb: number;
  used_mb: number;
  pct: number;
}

export interface InterfaceFigures {
  name: string;
  rx_bps: number;
  tx_bps: number;
  rx_pps: number;
  tx_pps: number;
  rx_errors: number;
  tx_errors: number;
  rx_drops: number;
  tx_drops: number;
}

export interface NetworkFigures {
  rx_bps: number;
  tx_bps: number;
  rx_pps: number;
  tx_pps: number;
  interfaces: InterfaceFigures[];
}

/** One round of measurements. A collector that failed leaves its part null and says why in `errors`. */
export interface Sample {
  ts: number;
  cpu: CpuFigures | null;
  load: LoadFigures | null;
  memory: MemoryFigures | null;
  disks: DiskFigures[] | null;
  network: NetworkFigures | null;
  uptime_s: number | null;
  errors: Record<string, string>;
}

/** The host's facts: what changes rarely. */
export interface HostFacts {
  hostname: string;
  os: string;
  kernel: string;
  arch: string;
  cores: number;
  mem_total_mb: number;
  public_ip: string | null;
}

/**
 * A collector measures one thing. `collect` may return a value with a partial error (one stuck
 * mount among several), or throw when it has nothing.
 */
export interface Collector<K extends keyof Sample = keyof Sample> {
  /** The sample field it fills. */
  name: K;
  /** Its name in `errors` and in Prometheus' `collector` label (docs/agent.md), when not `name`. */
  label?: string;
  collect(): Promise<{ value: Sample[K]; error?: string }>;
}

export const round1 = (n: number) => Math.round(n * 10) / 10;
export const mb = (bytes: number) => Math.round(bytes / 1048576);
