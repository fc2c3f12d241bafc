import { randomBytes } from 'node:crypto';
import type { AlertEvent, AttackDetails } from '../alerter/alerter.js';
import type { StateFile } from './store.js';

/** One detected attack (the webhook's `attack` object, plus what else the agent knows). */
export interface Attack extends AttackDetails {
  /** Interface of a traffic attack, pattern of a log attack. */
  target?: string;
}

/** What attacks.json holds. */
export interface AttackFile {
  attacks?: Attack[];
  total?: number;
}

const KEEP = 200;
const MAX_SOURCES = 100;

/**
 * Open and finished attacks. An attack is keyed by what it is about (`conn_flood`,
 * `traffic:eth0`, `log:sshd`); while a key keeps being observed the same attack goes on, and it
 * ends once the key has been quiet for `endAfterMs`.
 */
export class AttackLog {
  private list: Attack[];
  private active = new Map<string, { attack: Attack; lastSeen: number }>();
  total: number;

  constructor(
    private readonly file: StateFile<AttackFile> | null,
    private readonly alert: (e: AlertEvent) => void,
  ) {
    const saved = file?.read();
    this.list = saved?.attacks ?? [];
    // An attack still open when the agent stopped is closed at its last known moment.
    for (const a of this.list) if (a.ended_at === null) a.ended_at = a.started_at;
    this.total = saved?.total ?? this.list.length;
  }

  get activeCount(): number {
    return this.active.size;
  }

  isActive(key: string): boolean {
    return this.active.has(key);
  }

  /** Starts or continues the attack of `key`; `isNew` tells the caller to decide and record an action. */
  observe(
    key: string,
    kind: string,
    now: number,
    sources: { ip: string; hits: number }[],
    rates: { pps: number; bps: number },
    target?: string,
  ): { attack: Attack; isNew: boolean } {
    const open = this.active.get(key);
    if (open) {
      open.lastSeen = now;
      const a = open.attack;
      a.peak_pps = Math.max(a.peak_pps, Math.round(rates.pps));
      a.peak_bps = Math.max(a.peak_bps, Math.round(rates.bps));
      for (const s of sources) {
        const known = a.sources.find((x) => x.ip === s.ip);
        if (known) known.hits = Math.max(known.hits, s.hits);
        else if (a.sources.length < MAX_SOURCES) a.sources.push({ ...s });
      }
      a.sources.sort((x, y) => y.hits - x.hits);
      return { attack: a, isNew: false };
    }
    const attack: Attack = {
      id: `atk_${now.toString(36)}${randomBytes(3).toString('hex')}`,
      kind,
      started_at: now,
      ended_at: null,
      peak_pps: Math.round(rates.pps),
      peak_bps: Math.round(rates.bps),
      sources: sources
        .slice()
        .sort((x, y) => y.hits - x.hits)
        .slice(0, MAX_SOURCES),
      action: 'detected',
      ...(target ? { target } : {}),
    };
    this.active.set(key, { attack, lastSeen: now });
    this.list.push(attack);
    if (this.list.length > KEEP) this.list.splice(0, this.list.length - KEEP);
    this.total++;
    return { attack, isNew: true };
  }

  /** Sends attack.started once the caller has recorded the action. */
  announce(attack: Attack): void {
    this.alert({ type: 'attack.started', attack: { ...attack, sources: attack.sources.slice(0, 20) } });
    this.save();
  }

  /** Ends attacks quiet for `endAfterMs`. */
  endQuiet(now: number, endAfterMs: number): void {
    for (const [key, open] of this.active) {
      if (now - open.lastSeen < endAfterMs) continue;
      this.active.delete(key);
      open.attack.ended_at = now;
      this.alert({ type: 'attack.ended', attack: { ...open.attack, sources: open.attack.sources.slice(0, 20) } });
      this.save();
    }
  }

  find(id: string): Attack | undefined {
    return this.list.find((a) => a.id === id);
  }

  /** Newest first. */
  all(): Attack[] {
    return [...this.list].reverse();
  }

  latest(): Attack | undefined {
    return this.list[this.list.length - 1];
  }

  save(): void {
    this.file?.write({ total: this.total, attacks: this.list });
  }
}
