import { lookup } from 'node:dns/promises';
import type { ProtectionSettings } from '../config/protection-settings.js';
import type { AgentDeps } from '../deps.js';
import type { Log } from '../log.js';
import type { SetName } from './firewall.js';
import type { LogHost } from './log-sources.js';
import type { StateStore } from './store.js';

/** Cancels a timer made by `Timers`. */
export type Cancel = () => void;

/** Timers as the protection features use them; `unref` ones do not keep the process alive. */
export interface Timers {
  after(ms: number, fn: () => void, opts?: { unref?: boolean }): Cancel;
  every(ms: number, fn: () => void, opts?: { unref?: boolean }): Cancel;
  /** Yields to the event loop (long jobs between chunks). */
  yield(): Promise<void>;
}

/** The side effects protection takes from the daemon: clock and host (src/deps.ts), timers and DNS. */
export interface ProtectionDeps extends AgentDeps {
  timers: Timers;
  /** Every address of a host name. */
  resolve(host: string): Promise<string[]>;
  /** Where block patterns find logs and the journal; the real host when absent (log-sources.ts). */
  logs?: LogHost;
}

export function realTimers(): Timers {
  return {
    after(ms, fn, opts) {
      const t = setTimeout(fn, ms);
      if (opts?.unref) t.unref();
      return () => clearTimeout(t);
    },
    every(ms, fn, opts) {
      const t = setInterval(fn, ms);
      if (opts?.unref) t.unref();
      return () => clearInterval(t);
    },
    yield: () => new Promise((resolve) => setImmediate(resolve)),
  };
}

/** The daemon's deps, with the real timers and resolver where it does not provide them. */
export function protectionDeps(
  deps: AgentDeps & Partial<Pick<ProtectionDeps, 'timers' | 'resolve' | 'logs'>>,
): ProtectionDeps {
  return {
    ...deps,
    timers: deps.timers ?? realTimers(),
    resolve: deps.resolve ?? (async (host) => (await lookup(host, { all: true })).map((a) => a.address)),
  };
}

/** What every protection feature is built with. */
export interface FeatureContext {
  deps: ProtectionDeps;
  log: Log;
  store: StateStore;
  /** The current settings (a reload replaces them). */
  settings: () => ProtectionSettings;
  /** Tells the enforcer that these nftables sets must be recomputed and applied. */
  markDirty: (...sets: SetName[]) => void;
  /** Waits until the marked sets are in the firewall. */
  settle: () => Promise<void>;
}
