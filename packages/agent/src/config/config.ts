import { readFileSync } from 'node:fs';
import { type NetworkRange, parseNetworkList } from '../lib/ip-ranges.js';
import { ipaddr, parseIp } from '../lib/ipaddr.js';
import { readKvLine } from './kv-lines.js';
import { defaultProtectionSettings, PROTECTION_SETTERS, type ProtectionSettings } from './protection-settings.js';

/** Where the metrics API listens. */
export interface ListenAddress {
  host: string;
  port: number;
}

export interface AgentConfig {
  metrics: {
    listen: ListenAddress;
    whitelist: NetworkRange[];
    tls: boolean;
    intervalMs: number;
    history: number;
    collectorTimeoutMs: number;
  };
  host: { publicIp: string | null };
  alerter: {
    url: string | null;
    secret: string | null;
    queueMax: number;
    timeoutMs: number;
    retries: number;
    backoffMs: number;
  };
  checkin: { intervalS: number; timeoutMs: number };
  /**
   * How the console reaches this agent: `direct` (it calls the agent's address) or `outbound` (the
   * agent keeps a link open to its console and the console's calls come down it; docs/agent.md).
   */
  /** `linkHeartbeatMs`: the outbound link's heartbeat (packages/protocol/src/link.ts, linkTimers()). */
  console: { connect: 'direct' | 'outbound'; linkHeartbeatMs: number };
  /** Benchmark runs: `dir` null means the state directory. */
  bench: { dir: string | null; maxDiskMb: number; maxSeconds: number };
  protection: ProtectionSettings;
}

export const DEFAULT_CONFIG_FILE = '/etc/palisade-agent/agent.conf';
export const DEFAULT_LISTEN: ListenAddress = { host: '0.0.0.0', port: 9740 };

/** One problem in a config file, located by line. */
export interface ConfigProblem {
  line: number;
  message: string;
}

/** A config file that cannot be used; `message` lists every problem as `file:line: …`. */
export class ConfigError extends Error {
  constructor(
    readonly file: string,
    readonly problems: ConfigProblem[],
  ) {
    super(problems.map((p) => `${file}:${p.line}: ${p.message}`).join('\n'));
    this.name = 'ConfigError';
  }
}

type Setter = (config: AgentConfig, raw: string) => void;

function integer(min: number, max: number): (raw: string) => number {
  return (raw) => {
    if (!/^\d+$/.test(raw)) throw new Error(`expected a whole number from ${min} to ${max}`);
    const n = Number(raw);
    if (n < min || n > max) throw new Error(`expected a whole number from ${min} to ${max}`);
    return n;
  };
}

function decimal(min: number, max: number): (raw: string) => number {
  return (raw) => {
    if (!/^\d+(\.\d+)?$/.test(raw)) throw new Error(`expected a number from ${min} to ${max}`);
    const n = Number(raw);
    if (n < min || n > max) throw new Error(`expected a number from ${min} to ${max}`);
    return n;
  };
}

function boolean(raw: string): boolean {
  const v = raw.toLowerCase();
  if (['on', 'true', 'yes', '1'].includes(v)) return true;
  if (['off', 'false', 'no', '0'].includes(v)) return false;
  throw new Error('expected on or off');
}

export function parseListen(raw: string): ListenAddress {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]]*)):(\d{1,5})$/.exec(raw) ?? /^()()(\d{1,5})$/.exec(raw);
  const bad = new Error('expected host:port, [ipv6]:port or a port, e.g. 0.0.0.0:9740');
  if (!m) throw bad;
  const host = m[1] || m[2] || '0.0.0.0';
  const port = Number(m[3]);
  if (port > 65535) throw new Error('port must be from 0 to 65535');
  if (host !== 'localhost' && !parseIp(host))
    throw new Error(`"${host.slice(0, 80)}" is not an IP address; expected host:port with a canonical IP or localhost`);
  return { host, port };
}

function httpUrl(raw: string): string | null {
  if (raw === '') return null;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error('expected an http:// or https:// URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('expected an http:// or https:// URL');
  return url.toString();
}

/** Every key the file may hold; anything else is reported as unknown. */
const SETTERS: Record<string, Setter> = {
  'metrics.listen': (c, raw) => {
    c.metrics.listen = parseListen(raw);
  },
  'metrics.whitelist': (c, raw) => {
    c.metrics.whitelist = parseNetworkList(raw);
  },
  'metrics.tls': (c, raw) => {
    c.metrics.tls = boolean(raw);
  },
  'metrics.interval_s': (c, raw) => {
    c.metrics.intervalMs = Math.round(decimal(0.1, 3600)(raw) * 1000);
  },
  'metrics.history': (c, raw) => {
    c.metrics.history = integer(1, 10_000)(raw);
  },
  'metrics.collector_timeout_ms': (c, raw) => {
    c.metrics.collectorTimeoutMs = integer(10, 60_000)(raw);
  },
  'host.public_ip': (c, raw) => {
    if (raw === '') c.host.publicIp = null;
    else {
      const ip = parseIp(raw);
      if (!ip) throw new Error(`"${raw.slice(0, 80)}" is not an IP address; expected a canonical IPv4 or IPv6 address`);
      c.host.publicIp = ipaddr.process(ip.toString()).toString();
    }
  },
  'alerter.url': (c, raw) => {
    c.alerter.url = httpUrl(raw);
  },
  'alerter.secret': (c, raw) => {
    c.alerter.secret = raw === '' ? null : raw;
  },
  'alerter.queue_max': (c, raw) => {
    c.alerter.queueMax = integer(1, 100_000)(raw);
  },
  'alerter.timeout_ms': (c, raw) => {
    c.alerter.timeoutMs = integer(50, 120_000)(raw);
  },
  'alerter.retries': (c, raw) => {
    c.alerter.retries = integer(0, 20)(raw);
  },
  'alerter.backoff_ms': (c, raw) => {
    c.alerter.backoffMs = integer(10, 600_000)(raw);
  },
  'checkin.interval_s': (c, raw) => {
    c.checkin.intervalS = integer(1, 3600)(raw);
  },
  'checkin.timeout_ms': (c, raw) => {
    c.checkin.timeoutMs = integer(100, 120_000)(raw);
  },
  'console.connect': (c, raw) => {
    if (raw !== 'direct' && raw !== 'outbound') throw new Error('expected direct or outbound');
    c.console.connect = raw;
  },
  // The bounds of LINK_HEARTBEAT_MIN_MS and LINK_HEARTBEAT_MS (packages/protocol/src/link.ts), not
  // imported: the link's module is loaded only by an agent that keeps a link.
  'console.link_heartbeat_ms': (c, raw) => {
    c.console.linkHeartbeatMs = integer(500, 10_000)(raw);
  },
  'bench.dir': (c, raw) => {
    if (raw !== '' && !raw.startsWith('/'))
      throw new Error('expected an absolute directory path, or empty for the state directory');
    c.bench.dir = raw === '' ? null : raw.replace(/(.)\/+$/, '$1');
  },
  'bench.max_disk_mb': (c, raw) => {
    c.bench.maxDiskMb = integer(8, 1_048_576)(raw);
  },
  'bench.max_seconds': (c, raw) => {
    c.bench.maxSeconds = integer(5, 600)(raw);
  },
  'protection.backend': (c, raw) => {
    if (raw !== 'auto' && raw !== 'nftables' && raw !== 'monitor')
      throw new Error('expected auto, nftables or monitor');
    c.protection.backend = raw;
  },
  ...PROTECTION_SETTERS,
};

export const CONFIG_KEYS = Object.keys(SETTERS);
/** Keys whose values are credentials: never shown in an answer (docs/agent.md, "Secrets"). */
export const SECRET_KEYS = CONFIG_KEYS.filter((k) => /(secret|token|password|passwd|key)$/i.test(k));

export function defaultConfig(): AgentConfig {
  return {
    metrics: {
      listen: { ...DEFAULT_LISTEN },
      whitelist: [],
      tls: false,
      intervalMs: 2000,
      history: 150,
      collectorTimeoutMs: 1000,
    },
    host: { publicIp: null },
    alerter: { url: null, secret: null, queueMax: 1000, timeoutMs: 5000, retries: 3, backoffMs: 1000 },
    checkin: { intervalS: 30, timeoutMs: 10_000 },
    console: { connect: 'direct', linkHeartbeatMs: 10_000 },
    bench: { dir: null, maxDiskMb: 256, maxSeconds: 90 },
    protection: defaultProtectionSettings(),
  };
}

/** Strips matching quotes around a value. */
/**
 * Parses a file of `dotted.key = value` lines (`#` starts a comment line). Every problem is
 * collected, so one run names all of them; any problem throws a ConfigError.
 */
export function parseConfig(text: string, file: string): AgentConfig {
  const config = defaultConfig();
  const problems: ConfigProblem[] = [];
  const seen = new Map<string, number>();
  text.split(/\r?\n/).forEach((rawLine, index) => {
    const line = index + 1;
    const parsed = readKvLine(rawLine);
    if (parsed.kind === 'skip') return;
    if (parsed.kind === 'bad') {
      problems.push({ line, message: `expected "key = value", got "${parsed.text.slice(0, 60)}"` });
      return;
    }
    const { key, value } = parsed;
    const setter = Object.hasOwn(SETTERS, key) ? SETTERS[key] : undefined;
    if (!setter) {
      problems.push({ line, message: `unknown key "${key}"${suggest(key)}` });
      return;
    }
    const earlier = seen.get(key);
    if (earlier !== undefined) {
      problems.push({ line, message: `"${key}" is already set on line ${earlier}` });
      return;
    }
    seen.set(key, line);
    try {
      setter(config, value);
    } catch (err) {
      problems.push({ line, message: `bad value for ${key}: ${(err as Error).message}` });
    }
  });
  if (problems.length > 0) throw new ConfigError(file, problems);
  return config;
}

function suggest(key: string): string {
  const section = key.split('.')[0];
  const near = CONFIG_KEYS.filter((k) => k.split('.')[0] === section);
  return near.length > 0
    ? ` (known ${section}.* keys: ${near.join(', ')})`
    : ` (known keys: ${CONFIG_KEYS.join(', ')})`;
}

/**
 * Reads and parses the config file. A missing file at the default path means "all defaults";
 * a file named explicitly must exist and be readable.
 */
export function loadConfigFile(file: string, explicit: boolean): AgentConfig {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (!explicit && e.code === 'ENOENT') return defaultConfig();
    const why = e.code === 'ENOENT' ? 'no such file' : e.code === 'EACCES' ? 'permission denied' : e.message;
    throw new ConfigError(file, [{ line: 0, message: `cannot read the config file: ${why}` }]);
  }
  return parseConfig(text, file);
}
