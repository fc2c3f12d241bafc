// What the suites that run the install line on this host share (e2e/install.test.ts,
// e2e/install-signed.test.ts): whether they can run, which agents run, and the "server" they run it
// on — a network namespace joined to this host by a veth pair, as over a network.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readlinkSync } from 'node:fs';

/** Why a suite installing on this host cannot run here (needing `tools`), or null. */
export function installHostMissing(tools: readonly string[]): string | null {
  if (process.platform !== 'linux' || process.arch !== 'x64') return 'not Linux x64';
  if (process.getuid?.() !== 0) return 'not running as root';
  for (const tool of tools) {
    if (spawnSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' }).status !== 0)
      return `\`${tool}\` is missing`;
  }
  if (existsSync('/run/systemd/system')) return 'systemd runs here: the script would start the unit on this host';
  return null;
}

/** Pids of running processes whose executable is the packaged agent, or another (zombies have none). */
export const agentProcesses = (bin = '/usr/bin/palisade-agent') =>
  readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        return readlinkSync(`/proc/${p}/exe`).startsWith(bin);
      } catch {
        return false;
      }
    })
    .map(Number);

/** Whether dpkg has the palisade-agent package installed. */
export const packageInstalled = () =>
  spawnSync('dpkg', ['--status', 'palisade-agent'], { stdio: 'ignore' }).status === 0;

const sh = (cmd: string, args: string[]) =>
  execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

/**
 * A namespace named `<prefix>-<pid>` with a /30 of its own per run (`10.<octet + pid % 50>.…`), so
 * two runs and two suites on one machine do not collide. create() removes a leftover first.
 */
export function serverNamespace(prefix: string, octet: number) {
  const tag = (process.pid % 100000).toString(36);
  const ns = `${prefix}-${tag}`;
  const veth = `${prefix}v${tag}`;
  const net = `10.${octet + (process.pid % 50)}.${Math.floor(process.pid / 50) % 250}`;
  const remove = () => {
    spawnSync('ip', ['netns', 'del', ns], { stdio: 'ignore' });
    spawnSync('ip', ['link', 'del', veth], { stdio: 'ignore' });
  };
  return {
    ns,
    veth,
    hostIp: `${net}.1`,
    nsIp: `${net}.2`,
    remove,
    create() {
      remove();
      sh('ip', ['netns', 'add', ns]);
      sh('ip', ['link', 'add', veth, 'type', 'veth', 'peer', 'name', `${veth}n`]);
      sh('ip', ['link', 'set', `${veth}n`, 'netns', ns]);
      sh('ip', ['addr', 'add', `${net}.1/30`, 'dev', veth]);
      sh('ip', ['link', 'set', veth, 'up']);
      for (const args of [
        ['addr', 'add', `${net}.2/30`, 'dev', `${veth}n`],
        ['link', 'set', `${veth}n`, 'up'],
        ['link', 'set', 'lo', 'up'],
      ])
        sh('ip', ['netns', 'exec', ns, 'ip', ...args]);
    },
  };
}
