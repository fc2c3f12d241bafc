// Country ranges from @ip-location-db/geo-whois-asn-country (CC0), read only while geo is on and
// only for the chosen countries, so the agent stays small when geo is off.
import { createReadStream, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { InputError, parseAddress, parseNetwork } from '../lib/net.js';
import { type Element, elementOf } from './firewall.js';

// Made on first use: the ICU region data costs memory an agent with geo off should not carry.
let regionNames: Intl.DisplayNames | null = null;

/** An ISO 3166 alpha-2 code, upper-cased; throws for anything else. */
export function parseCountry(raw: string): string {
  if (!/^[A-Za-z]{2}$/.test(raw.trim()))
    throw new InputError('country: expected a two-letter ISO 3166 country code, e.g. DE');
  const cc = raw.trim().toUpperCase();
  // Codes ISO keeps for private use or groups (ZZ, EU, XA…) are names to Intl but no country; XK (Kosovo) is one.
  regionNames ??= new Intl.DisplayNames(['en'], { type: 'region', fallback: 'none' });
  if (!regionNames.of(cc) || /^(AA|Q[M-Z]|X[A-JL-Z]|ZZ|EU|EZ|UN)$/.test(cc))
    throw new InputError(`country: unknown country code "${cc}"`);
  return cc;
}

/** Private, loopback, link-local and similar ranges: never dropped by allow mode. */
export const RESERVED = [
  '0.0.0.0/8',
  '10.0.0.0/8',
  '100.64.0.0/10',
  '127.0.0.0/8',
  '169.254.0.0/16',
  '172.16.0.0/12',
  '192.168.0.0/16',
  '::/128',
  '::1/128',
  'fc00::/7',
  'fe80::/10',
].map((c) => elementOf(parseNetwork(c)));

const GEO_FILES = ['geo-whois-asn-country-ipv4.csv', 'geo-whois-asn-country-ipv6.csv'];

/** Opens one of the country-range CSV files (lines `start,end,CC`). */
export type GeoFileOpener = (file: string) => Readable;

/**
 * Where the CSV files are, by how the agent was installed (docs/agent.md#install): gzipped assets
 * of the single executable, gzipped in `palisade-agent-geo/` beside the one-file bundle, or the
 * npm package @ip-location-db/geo-whois-asn-country when run from dist/.
 */
export const openGeoFile: GeoFileOpener = (file) => {
  // zlib, node:sea and streams are loaded here, with geo on: in the one-file bundle static imports
  // would load them in every agent (docs/performance.md).
  const { createGunzip } = process.getBuiltinModule('node:zlib');
  const sea = process.getBuiltinModule('node:sea');
  if (sea.isSea())
    return process
      .getBuiltinModule('node:stream')
      .Readable.from([Buffer.from(sea.getRawAsset(`${file}.gz`) as ArrayBuffer)])
      .pipe(createGunzip());
  const beside = fileURLToPath(new URL(`./palisade-agent-geo/${file}.gz`, import.meta.url));
  if (existsSync(beside)) return createReadStream(beside).pipe(createGunzip());
  let dir: string;
  try {
    dir = dirname(createRequire(import.meta.url).resolve('@ip-location-db/geo-whois-asn-country/package.json'));
  } catch {
    throw new Error('geo: the country ranges are missing: put palisade-agent-geo/ beside palisade-agent.mjs');
  }
  return createReadStream(join(dir, file));
};

/** A range of the CSV files and the country it belongs to (so a lookup can name the country). */
export type CountryRange = Element & { country: string };

/** Streams the CSV files and keeps the ranges of `countries`. */
export async function loadCountryRanges(countries: Set<string>, open = openGeoFile): Promise<CountryRange[]> {
  const out: CountryRange[] = [];
  for (const file of GEO_FILES) {
    const lines = process
      .getBuiltinModule('node:readline')
      .createInterface({ input: open(file), crlfDelay: Number.POSITIVE_INFINITY });
    for await (const line of lines) {
      const cc = line.slice(line.lastIndexOf(',') + 1);
      if (!countries.has(cc)) continue;
      const [a, b] = line.split(',');
      const start = parseAddress(a ?? '');
      const end = parseAddress(b ?? '');
      if (!start || !end || start.family !== end.family) continue;
      out.push({ family: start.family, start: start.start, end: end.start, country: cc });
    }
  }
  return out;
}
