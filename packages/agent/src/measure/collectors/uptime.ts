import type { AgentDeps } from '../../deps.js';
import type { Collector } from '../types.js';

export function parseUptime(text: string): number {
  const first = text.trim().split(/\s+/)[0] ?? '';
  if (!/^\d+(\.\d+)?$/.test(first)) throw new Error('unreadable /proc/uptime');
  const seconds = Number(first);
  return Math.floor(seconds);
}

export function uptimeCollector(deps: AgentDeps): Collector<'uptime_s'> {
  const linux = deps.host.platform === 'linux';
  return {
    name: 'uptime_s',
    label: 'uptime',
    async collect() {
      return { value: linux ? parseUptime(await deps.host.read('/proc/uptime')) : Math.floor(deps.host.uptimeS()) };
    },
  };
}
