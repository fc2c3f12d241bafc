/** What /metrics shows under `protection`; the active backend at least. */
export interface ProtectionState {
  backend: 'monitor' | 'nftables';
  [key: string]: unknown;
}

/** What /metrics shows under `attacks`. */
export interface AttackCounts {
  active: number;
  total: number;
  [key: string]: unknown;
}

/** The seam a protection engine plugs into: the agent asks it for these two parts of /metrics. */
export interface ProtectionProvider {
  protection(): ProtectionState;
  attacks(): AttackCounts;
}

/** Until a protection engine is plugged in: monitor-only, nothing detected. */
export function monitorOnlyProtection(): ProtectionProvider {
  return {
    protection: () => ({ backend: 'monitor' }),
    attacks: () => ({ active: 0, total: 0 }),
  };
}
