// A short run of the side-by-side attack corpus (bench/protection-vs.mjs, docs/performance.md "Side
// by side") against the Palisade agent alone: a real openssh-server and nginx in a server namespace
// with the agent (nftables) watching their logs, SSH password guessers (sshpass), HTTP scanners and
// a connection flooder in an attacker namespace, benign clients logging in and loading pages from
// their own. Every attacker must end banned (its packets dropped) and no benign client ever blocked.
// The agent runs as shipped: an SSH session is a peer that logged in (utmp, or sshd's `Accepted`
// line), never one merely connected, so a guesser's own open connection does not shield it while
// the benign clients, who log in, are never banned.
// Needs root, ip, nft, sshd, nginx and sshpass: in CI their absence fails the suite.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { rootSuite, runToEnd } from '@palisade/testkit';

const BENCH = fileURLToPath(new URL('../../bench/protection-vs.mjs', import.meta.url));
const suite = rootSuite(
  'protection side by side',
  ['ip', 'nft', 'sshd', 'nginx', 'sshpass'],
  '.ci/run installs openssh-server, nginx and sshpass',
);

interface Result {
  attackers: { ip: string; role: string; banned_after_ms: number | null; answered: number }[];
  never_banned: string[];
  benign_blocked: { ip: string; failures: string[] }[];
  benign_answered: number;
  ssh_guesses_through: number;
}

describe('the attack corpus against the Palisade agent (root, namespaces, nftables)', suite, () => {
  test('SSH guessers, scanners and the flooder are banned; benign clients are never blocked', async () => {
    const run = await runToEnd(process.execPath, [
      BENCH,
      '--protectors',
      'palisade',
      '--seconds',
      '15',
      '--json',
      '--tag',
      `t${process.pid % 10000}`,
    ]);
    assert.equal(run.code, 0, run.out);
    const { results } = JSON.parse(run.stdout.trim().split('\n').at(-1)!) as { results: Result[] };
    const r = results[0]!;
    const guessers = r.attackers.filter((a) => a.role === 'ssh-guess');
    assert.equal(guessers.length, 4);
    // Each guesser reached sshd (its failed passwords are in the log) and was then dropped.
    for (const g of guessers) assert.ok(g.answered > 0, `${g.ip} never reached sshd`);
    assert.deepEqual(r.never_banned, [], `attackers never banned: ${r.never_banned.join(', ')}`);
    assert.deepEqual(r.benign_blocked, [], JSON.stringify(r.benign_blocked));
    // The benign clients did log in and load pages throughout (not a run where nothing happened).
    assert.ok(r.benign_answered > 4 * 5, `benign answers: ${r.benign_answered}`);
  });
});
