import type { CheckinBan } from '@palisade/protocol/checkin';
import type { BlacklistJob } from '@palisade/protocol/control-schemas/standalone';
import type { AlertEvent } from '../alerter/alerter.js';
import { InputError, type Network, parseAddress, sharedPrefix } from '../lib/net.js';
import { type Attack, AttackLog } from './attacks.js';
import type { FeatureContext } from './context.js';
import { Conflict } from './errors.js';
import type { Guard } from './guard.js';
import type { ListBook } from './list-book.js';
import type { AttackCounts } from './provider.js';
import type { StateFile } from './store.js';

export type { BlacklistJob };

type Rates = { pps: number; bps: number };
type Offences = Record<string, { count: number; last_at: number }>;

/** How a detector reports what it saw. */
export interface Sighting {
  /** What the attack is about (`conn_flood`, `traffic:eth0`, `log:sshd`): one open attack per key. */
  key: string;
  kind: string;
  now: number;
  sources: { ip: string; hits: number }[];
  target?: string;
  /** Rates to record; the current receive rates otherwise. */
  rates?: Rates;
  /** False: alert only, nobody is banned (traffic above the baseline). */
  ban?: boolean;
  /** First ban length (a block pattern's `ban_s`); `protection.ban_s` otherwise. */
  banS?: number;
}

/**
 * What happens once an attack is seen: the attack log (attacks.json), bans that grow with each
 * offence (offences.json), prefix bans, and blacklisting an attack's sources on request.
 */
export class AttackResponse {
  private log: AttackLog;
  private offencesFile: StateFile<Offences>;
  private offences = new Map<string, { count: number; last_at: number }>();
  private job: BlacklistJob = {
    state: 'idle',
    attack_id: null,
    total: 0,
    done: 0,
    added: 0,
    skipped: 0,
    started_at: null,
    finished_at: null,
    error: null,
  };

  constructor(
    private readonly ctx: FeatureContext,
    private readonly book: ListBook,
    private readonly guard: Guard,
    alert: (event: AlertEvent) => void,
    /** True when bans reach a firewall (not monitor-only). */
    private readonly enforcing: boolean,
    private readonly currentRates: () => Rates,
    /** Told of each address banned here, for the check-ins (docs/protection.md, "Fleet policies"). */
    private readonly onBan: (ban: CheckinBan) => void = () => {},
  ) {
    this.log = new AttackLog(ctx.store.json('attacks.json', {}), alert);
    this.offencesFile = ctx.store.json<Offences>('offences.json', {});
    for (const [ip, v] of Object.entries(this.offencesFile.read())) this.offences.set(ip, v);
  }

  get activeCount(): number {
    return this.log.activeCount;
  }

  isActive(key: string): boolean {
    return this.log.isActive(key);
  }

  endQuiet(now: number): void {
    this.log.endQuiet(now, this.ctx.settings().attackEndS * 1000);
  }

  save(): void {
    this.log.save();
  }

  /** Records an attack (new or ongoing) and bans its sources unless `ban` is false. */
  report(s: Sighting): void {
    const { attack, isNew } = this.log.observe(
      s.key,
      s.kind,
      s.now,
      s.sources,
      s.rates ?? this.currentRates(),
      s.target,
    );
    if (s.ban === false) {
      if (isNew) {
        attack.action = 'alert only: traffic above the baseline';
        this.log.announce(attack);
      }
      return;
    }
    const outcome = { banned: 0, kept: 0 };
    for (const src of s.sources) {
      const net = parseAddress(src.ip);
      if (!net) continue;
      const r = this.ban(net, `${s.kind} ${attack.id}`, s.now, s.banS);
      if (r !== 'allowed' && r !== 'already') {
        outcome.banned++;
        this.onBan({
          ip: net.text,
          kind: s.kind,
          attack_id: String(attack.id),
          pattern: s.kind === 'log_pattern' ? (s.target ?? null) : null,
          at: s.now,
          ttl_s: r.ttlS,
        });
      } else if (r === 'allowed') outcome.kept++;
    }
    const enforce = this.enforcing ? '' : ' (monitor-only: not enforced)';
    const banned = attack.sources.length - outcome.kept;
    attack.action =
      banned > 0
        ? `blacklisted ${banned} source${banned === 1 ? '' : 's'}${enforce}`
        : 'none: every source is whitelisted or protected';
    if (isNew) this.log.announce(attack);
  }

  /** Bans one address for a growing time; may ban its /24 or /64 when many neighbours are banned too. */
  private ban(net: Network, why: string, now: number, baseS?: number): { ttlS: number } | 'allowed' | 'already' {
    if (this.guard.isAllowed(net)) return 'allowed';
    const settings = this.ctx.settings();
    const black = this.book.blacklist;
    const existing = black.covering(net);
    if (existing && existing.text !== net.text) return 'already';
    const stored = [...black.stored()].find((e) => e.net.text === net.text);
    if (stored && (stored.source !== 'attack' || (stored.expires_at ?? 0) - now > 60_000)) return 'already';
    const o = this.offences.get(net.text);
    const count = o && now - o.last_at < 30 * 86400_000 ? o.count + 1 : 1;
    this.offences.set(net.text, { count, last_at: now });
    if (this.offences.size > 50_000) this.offences.delete(this.offences.keys().next().value!);
    const base = baseS ?? settings.banS;
    const ttlS = Math.max(1, Math.round(Math.min(settings.banMaxS, base * 2 ** Math.min(count - 1, 30))));
    black.add({ net, note: `${why}${count > 1 ? ` (offence ${count})` : ''}`, ttl_s: ttlS }, 'attack', now);
    this.offencesFile.write(Object.fromEntries(this.offences));
    if (settings.prefixBanAt > 0) {
      const prefix = sharedPrefix(net);
      if (!black.has(prefix) && !this.guard.isAllowed(prefix)) {
        let n = 0;
        let longest = 0;
        for (const e of black.stored()) {
          if (e.source !== 'attack' || e.net.family !== net.family || e.net.text === prefix.text) continue;
          if (sharedPrefix(e.net).text === prefix.text) {
            n++;
            longest = Math.max(longest, e.expires_at ?? 0);
          }
        }
        if (n >= settings.prefixBanAt) {
          black.add(
            {
              net: prefix,
              note: `prefix ban: ${n} attackers in ${prefix.text}`,
              ttl_s: Math.max(1, Math.round((longest - now) / 1000)),
            },
            'attack',
            now,
          );
        }
      }
    }
    return { ttlS };
  }

  /** The /metrics part. */
  counts(): AttackCounts {
    const last = this.log.latest();
    return {
      active: this.log.activeCount,
      total: this.log.total,
      last: last ? { id: last.id, kind: last.kind, started_at: last.started_at, ended_at: last.ended_at } : null,
    };
  }

  list() {
    return { attacks: this.log.all(), active: this.log.activeCount, total: this.log.total };
  }

  /** Starts blacklisting an attack's sources in the background; progress in `jobStatus`. */
  blacklist(id: string | number) {
    const attack = this.log.find(String(id));
    if (!attack) throw new InputError(`attack_id: unknown attack "${String(id).slice(0, 60)}"`);
    if (this.job.state === 'running') throw new Conflict(`blacklisting attack ${this.job.attack_id} is still running`);
    const sources = attack.sources.map((s) => s.ip);
    this.job = {
      state: 'running',
      attack_id: attack.id,
      total: sources.length,
      done: 0,
      added: 0,
      skipped: 0,
      started_at: this.ctx.deps.clock(),
      finished_at: null,
      error: null,
    };
    void this.runJob(attack, sources);
    return { started: true, ...this.job };
  }

  private async runJob(attack: Attack, sources: string[]) {
    const job = this.job;
    try {
      for (let i = 0; i < sources.length; i += 50) {
        const chunk = sources.slice(i, i + 50);
        const r = this.book.blacklist.import(
          chunk.map((ip) => ({ ip, note: `sources of attack ${attack.id} (${attack.kind})` })),
          'attack',
          this.ctx.deps.clock(),
          (net) => this.guard.isAllowed(net),
        );
        job.added += r.added;
        job.skipped += r.skipped + r.invalid;
        job.done += chunk.length;
        await this.ctx.deps.timers.yield();
      }
      await this.ctx.settle();
      job.state = 'done';
    } catch (err) {
      job.state = 'failed';
      job.error = (err as Error).message;
    }
    job.finished_at = this.ctx.deps.clock();
  }

  jobStatus() {
    return { ...this.job };
  }

  /** A running job is reported failed when the agent stops under it. */
  abandonJob(): void {
    if (this.job.state === 'running') this.job.state = 'failed';
  }
}
