import type { Log } from '../log.js';
import type { Cancel, ProtectionDeps } from './context.js';
import { type Element, type Firewall, type GeoMode, SET_NAMES, type SetName, type WantedState } from './firewall.js';

/** Where each nftables set's contents come from (the features that own them). */
export interface SetSources {
  sets: Record<SetName, () => Element[]>;
  geoMode: () => GeoMode;
}

/**
 * Owns the wanted nftables sets and the apply/reconcile cycle: features mark sets dirty, changes
 * within 20 ms go out as one transaction, and a periodic reconcile repairs drift. The firewall
 * (firewall.ts) is the backend that turns the wanted state into nft commands.
 */
export class Enforcer {
  private sources: SetSources | null = null;
  private cache = new Map<SetName, Element[]>();
  private dirty = new Set<SetName>();
  private cancelApply: Cancel | null = null;
  private cancelReconcile: Cancel | null = null;
  private applyError: string | null = null;
  private lastApplyAt: number | null = null;
  private stopped = false;

  constructor(
    readonly firewall: Firewall,
    private readonly deps: ProtectionDeps,
    private readonly log: Log,
  ) {}

  /** Connects the features once they exist (they need `markDirty` to be built). */
  use(sources: SetSources): void {
    this.sources = sources;
  }

  /** Applies every set (start-up). */
  async applyAll(): Promise<void> {
    await this.firewall.apply(this.wanted(), 'all');
    this.lastApplyAt = this.deps.clock();
    this.dirty.clear();
  }

  markDirty(...sets: SetName[]): void {
    for (const s of sets) {
      this.dirty.add(s);
      this.cache.delete(s);
    }
    if (this.cancelApply || this.stopped) return;
    // Changes within 20 ms go out as one nft transaction.
    this.cancelApply = this.deps.timers.after(20, () => void this.applyDirty());
  }

  private async applyDirty() {
    this.cancelApply = null;
    const sets = [...this.dirty];
    this.dirty.clear();
    if (sets.length === 0) return;
    try {
      await this.firewall.apply(this.wanted(), sets);
      this.applyError = null;
      this.lastApplyAt = this.deps.clock();
    } catch (err) {
      this.applyError = (err as Error).message;
      this.log('error', `protection: applying ${sets.join(', ')} failed: ${this.applyError}`);
    }
  }

  /** Waits until pending changes are in the firewall. */
  async settle(): Promise<void> {
    if (this.cancelApply) {
      this.cancelApply();
      await this.applyDirty();
    }
  }

  /** (Re)starts the periodic reconcile. */
  startReconcile(seconds: number): void {
    this.cancelReconcile?.();
    this.cancelReconcile = this.deps.timers.every(seconds * 1000, () => void this.reconcile());
  }

  private async reconcile() {
    if (this.stopped) return;
    await this.firewall.reconcile(this.wanted());
  }

  /** Stops the timers; nothing is applied afterwards. */
  halt(): void {
    this.stopped = true;
    this.cancelReconcile?.();
    this.cancelApply?.();
    this.cancelApply = null;
  }

  /** Removes the table (agent stop). */
  remove(): Promise<void> {
    return this.firewall.remove();
  }

  wanted(): WantedState {
    const src = this.sources;
    if (!src) throw new Error('protection: the enforcer has no set sources yet');
    const sets = {} as Record<SetName, Element[]>;
    for (const name of SET_NAMES) {
      let s = this.cache.get(name);
      if (!s) {
        s = src.sets[name]();
        this.cache.set(name, s);
      }
      sets[name] = s;
    }
    return { sets, geoMode: src.geoMode() };
  }

  /** The enforcement part of /metrics. */
  status() {
    return {
      counters: this.firewall.counters(),
      drift: this.firewall.drift(),
      last_apply_at: this.lastApplyAt,
      last_apply_error: this.applyError,
    };
  }
}
