import { join } from 'node:path';
import type { CheckinBan } from '@palisade/protocol/checkin';
import {
  type AutofetchToggleBody,
  type Baseline as BaselineData,
  type BlacklistReadQuery,
  type BlockPatternBody,
  type Enforcement,
  type EntrySource,
  FEED_PAGE_DEFAULT,
  type GeoModeBody,
  type ListEntryInput,
  type ListImportBody,
  type ScheduleBody,
} from '@palisade/protocol/control-schemas/standalone';
import type { AlertEvent } from '../alerter/alerter.js';
import type { ProtectionSettings } from '../config/protection-settings.js';
import type { AgentDeps } from '../deps.js';
import type { Log } from '../log.js';
import { AttackResponse } from './attack-response.js';
import { Autofetch } from './autofetch.js';
import { type Cancel, type FeatureContext, type ProtectionDeps, protectionDeps } from './context.js';
import { Detection } from './detection.js';
import { Enforcer } from './enforcer.js';
import {
  type Firewall,
  monitorFirewall,
  nftablesAvailable,
  nftablesFirewall,
  type SetName,
  type WantedState,
} from './firewall.js';
import { GeoFilter } from './geo-filter.js';
import { Guard } from './guard.js';
import { ListBook, type ListName } from './list-book.js';
import { boundRegexBacktracking } from './log-patterns.js';
import { lookUp, parseLookupAddress } from './lookup.js';
import { PatternWatch } from './pattern-watch.js';
import type { AttackCounts, ProtectionProvider, ProtectionState } from './provider.js';
import { Schedule, type TaskName } from './schedule.js';
import { StateStore } from './store.js';

export type { BlacklistJob } from './attack-response.js';
export { Conflict, NotFound } from './errors.js';
export type { ListName } from './list-book.js';
export { TASKS, type TaskName } from './schedule.js';

export interface EngineOptions {
  /** The daemon's deps; timers, DNS and where logs are default to the real ones when absent. */
  deps: AgentDeps & Partial<Pick<ProtectionDeps, 'timers' | 'resolve' | 'logs'>>;
  log: Log;
  stateDir: string;
  settings: ProtectionSettings;
  alert: (event: AlertEvent) => void;
  /** The console this agent enrolled with (its address is never banned). */
  consoleUrl: () => string | null;
  /** The console's addresses kept with the enrolment (resolved when it was made). */
  consoleIps?: () => string[];
  /** Tests pass a firewall; otherwise `settings.backend` chooses. */
  firewall?: Firewall;
  /** Told of each address the engine bans on its own (the check-ins report them). */
  onBan?: (ban: CheckinBan) => void;
}

/**
 * The protection engine: the one object the daemon, the control routes and /metrics talk to. It
 * builds one module per feature (lists, guard, geo, feeds, patterns, detection, attacks, schedule),
 * hands them one FeatureContext, runs the detection tick and leaves the firewall to the Enforcer.
 */
export class ProtectionEngine implements ProtectionProvider {
  private settings: ProtectionSettings;
  private backendReason: string | null;
  private deps: ProtectionDeps;
  private store: StateStore;
  private ctx: FeatureContext;
  private enforcer: Enforcer;
  private book: ListBook;
  private guard: Guard;
  private geo: GeoFilter;
  private feeds: Autofetch;
  private response: AttackResponse;
  private patterns: PatternWatch;
  private detection: Detection;
  private schedule: Schedule;
  private cancelTick: Cancel | null = null;
  private cancelConsole: Cancel | null = null;
  private ticking = false;
  /** Detection rounds finished since start: shown in /metrics, so a check can count rounds instead of waiting. */
  private rounds = 0;
  private errors: Record<string, string> = {};
  private stopped = false;

  private constructor(
    private readonly o: EngineOptions,
    firewall: Firewall,
    backendReason: string | null,
  ) {
    this.settings = o.settings;
    this.deps = protectionDeps(o.deps);
    this.enforcer = new Enforcer(firewall, this.deps, o.log);
    this.backendReason = backendReason;
    this.store = new StateStore(join(o.stateDir, 'protection'));
    this.ctx = {
      deps: this.deps,
      log: o.log,
      store: this.store,
      settings: () => this.settings,
      markDirty: (...sets) => this.enforcer.markDirty(...sets),
      settle: () => this.enforcer.settle(),
    };
    this.book = new ListBook(this.ctx, (net) => this.guard.isAllowed(net));
    this.guard = new Guard(this.ctx, this.book.whitelist, o.consoleUrl, o.consoleIps);
    this.geo = new GeoFilter(this.ctx);
    this.feeds = new Autofetch(this.ctx, this.book);
    this.response = new AttackResponse(
      this.ctx,
      this.book,
      this.guard,
      o.alert,
      firewall.kind === 'nftables',
      () => this.detection.rates,
      o.onBan,
    );
    this.patterns = new PatternWatch(this.ctx, this.response, (ip) => this.guard.sessionAccepted(ip));
    this.detection = new Detection(this.ctx, this.book, this.guard, this.response);
    this.schedule = new Schedule(this.ctx, (task) => this.runTask(task));
    this.enforcer.use({
      sets: {
        allow: () => this.guard.elements(),
        manual: () => this.book.blocked('manual'),
        attack: () => this.book.blocked('attack'),
        feed: () => this.feeds.elements(),
        geo: () => this.geo.elements(),
      },
      geoMode: () => this.geo.mode,
    });
  }

  /** Chooses the backend (`auto`: nftables when root with nft, else monitor-only) and starts every loop. */
  static async start(o: EngineOptions): Promise<ProtectionEngine> {
    let firewall = o.firewall;
    let reason: string | null = null;
    if (!firewall) {
      const log = (m: string) => o.log('warn', m);
      if (o.settings.backend === 'monitor') {
        firewall = monitorFirewall();
        reason = 'protection.backend = monitor';
      } else {
        const why = await nftablesAvailable();
        if (why === null) firewall = nftablesFirewall({ clock: o.deps.clock, log });
        else if (o.settings.backend === 'nftables')
          throw new Error(`protection.backend = nftables, but nftables cannot be used: ${why}`);
        else {
          firewall = monitorFirewall();
          reason = why;
          o.log('warn', `protection: monitor-only (${why}); attacks are detected and listed but nothing is blocked`);
        }
      }
    }
    boundRegexBacktracking();
    const engine = new ProtectionEngine(o, firewall, reason);
    await engine.begin();
    return engine;
  }

  private async begin() {
    await this.guard.refreshConsole();
    await this.patterns.applyProtect(this.settings.protect);
    await this.tick();
    if (this.geo.mode !== 'off') await this.geo.load();
    await this.enforcer.applyAll();
    this.startTimers();
    this.schedule.start();
  }

  private startTimers() {
    const timers = this.deps.timers;
    this.cancelTick = timers.every(this.settings.checkIntervalMs, () => void this.tick());
    this.enforcer.startReconcile(this.settings.reconcileS);
    this.cancelConsole = timers.every(10 * 60_000, () => void this.guard.refreshConsole(), { unref: true });
  }

  private stopTimers() {
    this.cancelTick?.();
    this.cancelConsole?.();
  }

  /** Settings from a reloaded config file. */
  configure(next: ProtectionSettings): void {
    const feedsChanged = JSON.stringify(next.feeds) !== JSON.stringify(this.settings.feeds);
    this.settings = next;
    if (next.backend !== 'auto' && next.backend !== this.enforcer.firewall.kind)
      this.o.log('warn', `protection.backend changed to ${next.backend}: restart the agent to switch backends`);
    this.stopTimers();
    if (feedsChanged) {
      this.feeds.load(next.feeds);
      this.enforcer.markDirty('feed');
    }
    this.startTimers();
    // A changed protection.protect is applied at a reload too, not only at the next start.
    this.patterns
      .applyProtect(next.protect)
      .catch((err: Error) => this.o.log('warn', `protection.protect not applied: ${err.message}`));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.stopTimers();
    this.enforcer.halt();
    this.schedule.stop();
    this.patterns.stop();
    try {
      this.book.flush();
      this.response.save();
      this.detection.saveBaseline();
    } catch (err) {
      this.o.log('error', `protection: state not saved on stop: ${(err as Error).message}`);
    } finally {
      // The table goes whatever happened to the state files.
      await this.enforcer.remove();
    }
  }

  /**
   * A new or changed enrolment: its console's addresses are protected at once, then its host is
   * resolved again (before, the agent learnt them only at its next start or ten minutes later).
   */
  enrolmentChanged(): Promise<void> {
    this.guard.learnConsole();
    return this.guard.refreshConsole();
  }

  // ---- enforcement ----

  /** Waits until pending changes are in the firewall (tests, bench). */
  settle(): Promise<void> {
    return this.enforcer.settle();
  }

  wanted(): WantedState {
    return this.enforcer.wanted();
  }

  // ---- detection ----

  private async tick() {
    if (this.ticking || this.stopped) return;
    this.ticking = true;
    try {
      const now = this.deps.clock();
      this.book.expire(now);
      await this.detection.checkTraffic(now);
      await this.detection.checkSockets(now);
      this.patterns.check();
      this.response.endQuiet(now);
      if (this.stopped) this.response.abandonJob();
      this.rounds++;
    } catch (err) {
      this.errors.detection = (err as Error).message;
    } finally {
      this.ticking = false;
    }
  }

  // ---- /metrics ----

  protection(): ProtectionState {
    const wanted = this.wanted();
    const count = (name: SetName) => wanted.sets[name].length;
    return {
      backend: this.enforcer.firewall.kind,
      backend_reason: this.backendReason,
      whitelist: this.book.whitelist.size,
      blacklist: this.book.blacklist.size,
      blocked: { manual: count('manual'), attack: count('attack'), feed: count('feed'), geo: count('geo') },
      protected: this.guard.counts(),
      geo: this.geo.view(),
      autofetch: this.feeds.summary(),
      patterns: this.patterns.size,
      baseline_samples: this.detection.baselineSamples(),
      detection_rounds: this.rounds,
      rates: { rx_pps: Math.round(this.detection.rates.pps), rx_bps: Math.round(this.detection.rates.bps) },
      ...this.enforcer.status(),
      errors: { ...(this.guard.error ? { console: this.guard.error } : {}), ...this.errors },
    };
  }

  attacks(): AttackCounts {
    return this.response.counts();
  }

  // ---- control API ----

  listEntries(name: ListName) {
    return this.book.listEntries(name);
  }

  /** The firewall backend running now and why (monitor-only blocks nothing). */
  enforcement(): Enforcement {
    return { backend: this.enforcer.firewall.kind, reason: this.backendReason };
  }

  /**
   * `GET blacklist`: the entries; with `ip` every source holding that address (docs/protection.md,
   * "Why is this address blocked?"); with `source=feed:<name>` one page of that feed.
   */
  readBlacklist(query: BlacklistReadQuery) {
    if (query.ip !== undefined)
      return lookUp(parseLookupAddress(query.ip), {
        book: this.book,
        guard: this.guard,
        feeds: this.feeds,
        geo: this.geo,
        enforcement: this.enforcement(),
        now: this.deps.clock(),
      });
    if (query.source !== undefined)
      return this.feeds.page(
        query.source.slice('feed:'.length),
        query.cursor,
        query.limit === undefined ? FEED_PAGE_DEFAULT : Number(query.limit),
      );
    return this.book.listEntries('blacklist');
  }

  addEntry(name: ListName, body: ListEntryInput) {
    return this.book.addEntry(name, body);
  }

  importEntries(name: ListName, body: ListImportBody) {
    return this.book.importEntries(name, body);
  }

  removeEntry(name: ListName, ip: string) {
    return this.book.removeEntry(name, ip);
  }

  clearList(name: ListName, source?: EntrySource) {
    return this.book.clearList(name, source);
  }

  geoMode() {
    return this.geo.view();
  }

  setGeo(body: GeoModeBody) {
    return this.geo.set(body);
  }

  toggleCountry(country: string) {
    return this.geo.toggle(country);
  }

  baselineExport() {
    return this.detection.baselineExport();
  }

  baselineImport(body: BaselineData) {
    return this.detection.baselineImport(body);
  }

  baselineDelete() {
    return this.detection.baselineDelete();
  }

  autofetchState() {
    return this.feeds.view();
  }

  toggleAutofetch(body: AutofetchToggleBody) {
    return this.feeds.toggle(body);
  }

  /** Fetches the enabled feeds (or one); a failed fetch keeps the previous list and is reported. */
  fetchFeeds(only?: string) {
    return this.feeds.fetch(only);
  }

  scheduleList() {
    return this.schedule.list();
  }

  setSchedule(body: ScheduleBody) {
    return this.schedule.set(body);
  }

  /** What each scheduled task does. */
  private async runTask(task: TaskName) {
    if (task === 'autofetch') {
      if (this.feeds.enabled) await this.feeds.fetch();
    } else if (task === 'baseline-save') this.detection.saveBaseline();
    else this.book.blacklist.clear('attack');
  }

  patternList() {
    return this.patterns.list();
  }

  addPattern(body: BlockPatternBody) {
    return this.patterns.add(body);
  }

  removePattern(name: string) {
    return this.patterns.remove(name);
  }

  attackList() {
    return this.response.list();
  }

  /** Starts blacklisting an attack's sources in the background; progress in `blacklistStatus`. */
  blacklistAttack(attackId: string | number) {
    return this.response.blacklist(attackId);
  }

  blacklistStatus() {
    return this.response.jobStatus();
  }

  settingsSummary() {
    return { ...this.settings };
  }
}
