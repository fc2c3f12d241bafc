import type { GeoModeBody } from '@palisade/protocol/control-schemas/standalone';
import { bigIntToAddress, InputError, type Network } from '../lib/net.js';
import type { FeatureContext } from './context.js';
import { disjoint, type Element, type GeoMode } from './firewall.js';
import { type CountryRange, loadCountryRanges, parseCountry, RESERVED } from './geo.js';
import type { StateFile } from './store.js';

interface GeoFile {
  mode: GeoMode;
  countries: string[];
}

/** Geo blocking: the mode and countries (geo.json) and the country ranges loaded for them. */
export class GeoFilter {
  private file: StateFile<GeoFile>;
  private geo: GeoFile;
  private ranges: CountryRange[] = [];
  private status: { loading: boolean; ranges: number; error: string | null } = {
    loading: false,
    ranges: 0,
    error: null,
  };

  constructor(private readonly ctx: FeatureContext) {
    this.file = ctx.store.json<GeoFile>('geo.json', { mode: 'off', countries: [] });
    this.geo = this.file.read();
  }

  get mode(): GeoMode {
    return this.geo.mode;
  }

  /** The `geo` set: the chosen countries, plus the reserved ranges in allow mode. */
  elements(): Element[] {
    if (this.geo.mode === 'off') return [];
    return disjoint(this.geo.mode === 'allow' ? [...this.ranges, ...RESERVED] : this.ranges);
  }

  get countries(): readonly string[] {
    return this.geo.countries;
  }

  /**
   * What the geo rule does to one address: deny mode drops it when a chosen country's range holds
   * it; allow mode drops it unless one does (or it is a private, loopback or link-local address).
   */
  holding(net: Network): { country: string | null; range: string | null; reserved: boolean } {
    const inside = (e: Element) => e.family === net.family && e.start <= net.start && net.start <= e.end;
    const hit = this.ranges.find(inside);
    const range = (e: Element) => `${bigIntToAddress(e.start, e.family)}-${bigIntToAddress(e.end, e.family)}`;
    return {
      country: hit?.country ?? null,
      range: hit ? range(hit) : null,
      reserved: RESERVED.some(inside),
    };
  }

  view() {
    return { mode: this.geo.mode, countries: this.geo.countries, ...this.status };
  }

  async set(body: GeoModeBody) {
    const mode = body.mode ?? this.geo.mode;
    const countries = body.countries ? [...new Set(body.countries.map(parseCountry))].sort() : this.geo.countries;
    if (mode === 'allow' && countries.length === 0)
      throw new InputError('countries: allow mode needs at least one country, or every other address would be dropped');
    this.geo = { mode, countries };
    this.file.write(this.geo);
    await this.load();
    return this.view();
  }

  async toggle(country: string) {
    const cc = parseCountry(country);
    const countries = this.geo.countries.includes(cc)
      ? this.geo.countries.filter((c) => c !== cc)
      : [...this.geo.countries, cc].sort();
    return this.set({ mode: this.geo.mode, countries });
  }

  /** Loads the ranges of the chosen countries and applies them. */
  async load(): Promise<void> {
    if (this.geo.mode === 'off' || this.geo.countries.length === 0) {
      this.ranges = [];
      this.status = { loading: false, ranges: 0, error: null };
    } else {
      this.status.loading = true;
      try {
        this.ranges = await loadCountryRanges(new Set(this.geo.countries));
        this.status = { loading: false, ranges: this.ranges.length, error: null };
      } catch (err) {
        this.status = { loading: false, ranges: this.ranges.length, error: (err as Error).message };
      }
    }
    this.ctx.markDirty('geo');
    await this.ctx.settle();
  }
}
