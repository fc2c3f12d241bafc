import { execFileSync, spawnSync } from 'node:child_process';

/**
 * A real agent's network for root tests: the agent in a namespace of its own, reached from this
 * host (the console's side) through one veth pair, and reaching an outside namespace (an attacker,
 * a flooder) through another, so traffic from outside crosses the agent's nftables.
 *
 *   host  hostIp ── agentIp  [agent ns]  agentEdgeIp ── outsideIp  [outside ns]
 *
 * `prefix` (two letters) keeps each test file's namespaces and links apart; the process id keeps
 * runs apart, and picks the third octet of both subnets (`10.<hostNet>.x.0/24`, `10.<edgeNet>.x.0/24`).
 */
export function agentNetwork(prefix: string, hostNet: number, edgeNet: number) {
  const tag = (process.pid % 100000).toString(36);
  const net = process.pid % 250;
  const names = {
    agentNs: `${prefix}a-${tag}`,
    outsideNs: `${prefix}o-${tag}`,
    hostLink: `${prefix}h-${tag}`,
    agentLink: `${prefix}ha-${tag}`,
    edgeLink: `${prefix}x-${tag}`,
    outsideLink: `${prefix}xc-${tag}`,
  };
  const sh = (cmd: string, args: string[]) => execFileSync(cmd, args, { encoding: 'utf8' });
  const ipIn = (ns: string, args: string[]) => sh('ip', ['netns', 'exec', ns, 'ip', ...args]);
  const network = {
    agentNs: names.agentNs,
    outsideNs: names.outsideNs,
    hostIp: `10.${hostNet}.${net}.1`,
    agentIp: `10.${hostNet}.${net}.2`,
    agentEdgeIp: `10.${edgeNet}.${net}.1`,
    outsideIp: `10.${edgeNet}.${net}.2`,
    /** Removes what an earlier run may have left, then builds both namespaces and links. */
    create() {
      network.remove();
      sh('ip', ['netns', 'add', names.agentNs]);
      sh('ip', ['netns', 'add', names.outsideNs]);
      sh('ip', ['link', 'add', names.hostLink, 'type', 'veth', 'peer', 'name', names.agentLink]);
      sh('ip', ['link', 'set', names.agentLink, 'netns', names.agentNs]);
      sh('ip', ['addr', 'add', `${network.hostIp}/24`, 'dev', names.hostLink]);
      sh('ip', ['link', 'set', names.hostLink, 'up']);
      const edgePair = ['link', 'add', names.edgeLink, 'netns', names.agentNs, 'type', 'veth'];
      sh('ip', [...edgePair, 'peer', 'name', names.outsideLink, 'netns', names.outsideNs]);
      for (const args of [
        ['link', 'set', 'lo', 'up'],
        ['addr', 'add', `${network.agentIp}/24`, 'dev', names.agentLink],
        ['link', 'set', names.agentLink, 'up'],
        ['addr', 'add', `${network.agentEdgeIp}/24`, 'dev', names.edgeLink],
        ['link', 'set', names.edgeLink, 'up'],
      ])
        ipIn(names.agentNs, args);
      for (const args of [
        ['link', 'set', 'lo', 'up'],
        ['addr', 'add', `${network.outsideIp}/24`, 'dev', names.outsideLink],
        ['link', 'set', names.outsideLink, 'up'],
      ])
        ipIn(names.outsideNs, args);
    },
    /** Deleting the namespaces deletes the links inside them; the host's end goes with its pair. */
    remove() {
      for (const ns of [names.agentNs, names.outsideNs]) spawnSync('ip', ['netns', 'del', ns], { stdio: 'ignore' });
      spawnSync('ip', ['link', 'del', names.hostLink], { stdio: 'ignore' });
    },
  };
  return network;
}
