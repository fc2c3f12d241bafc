import { InputError } from '../lib/net.js';
import type { FeatureContext } from './context.js';
import { objectBody } from './errors.js';
import { disjoint, type Element, type GeoMode } from './firewall.js';
import { loadCountryRanges, parseCountry, RESERVED } from './geo.js';
import type { StateFile } from './store.js';

interface GeoFile {
  mode: GeoMode;
  countries: string[];
}

/** Geo blocking: the mode and countries (geo.json) and the country ranges loaded for them. */
export class GeoFilter {
  private file: StateFile<GeoFile>;
  private geo: GeoFile;
  private ranges: Element[] = [];
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

  view() {
    return { mode: this.geo.mode, countries: this.geo.countries, ...this.status };
  }

  async set(body: unknown) {
    const o = objectBody(body);
    const mode = o.mode ?? this.geo.mode;
    if (mode !== 'off' && mode !== 'allow' && mode !== 'deny')
      throw new InputError('mode: expected off, allow or deny');
    let countries = this.geo.countries;
    if (o.countries !== undefined) {
      if (!Array.isArray(o.countries)) throw new InputError('countries: expected a list of two-letter country codes');
      countries = [...new Set(o.countries.map(parseCountry))].sort();
    }
    if (mode === 'allow' && countries.length === 0)
      throw new InputError('countries: allow mode needs at least one country, or every other address would be dropped');
    this.geo = { mode, countries };
    this.file.write(this.geo);
    await this.load();
    return this.view();
  }

  async toggle(body: unknown) {
    const cc = parseCountry(objectBody(body).country);
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
