import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { acceptedFrom, utmpHosts } from '../src/protection/ssh-sessions.js';

/** One glibc utmp record (384 bytes): type, user, host text and address as sshd writes them. */
function record(type: number, user: string, host: string, addr: number[] | null): Buffer {
  const b = Buffer.alloc(384);
  b.writeInt32LE(type, 0);
  b.write('pts/0', 8, 'latin1');
  b.write(user, 44, 'latin1');
  b.write(host, 76, 'latin1');
  if (addr) Buffer.from(addr).copy(b, 348);
  return b;
}

describe('which SSH peers logged in (protection/ssh-sessions.ts)', () => {
  test('utmp: the interactive log-ins (USER_PROCESS) by their address, IPv4 and IPv6; nothing else', () => {
    const v6 = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x42];
    const bytes = Buffer.concat([
      record(7, 'admin', '203.0.113.9', [203, 0, 113, 9]),
      record(7, 'ops', '2001:db8::42', v6),
      record(8, 'gone', '198.51.100.7', [198, 51, 100, 7]), // DEAD_PROCESS: logged out
      record(6, 'LOGIN', '', null), // a getty
      record(7, 'local', '', null), // a console log-in: no peer
      record(7, 'named', '192.0.2.5', null), // no address field: the host text
      Buffer.alloc(100), // a torn last record is ignored
    ]);
    assert.deepEqual([...utmpHosts(bytes)].sort(), ['192.0.2.5', '2001:db8::42', '203.0.113.9']);
  });

  test("sshd's Accepted lines name the peer; failures and other lines do not", () => {
    assert.equal(
      acceptedFrom('sshd[77]: Accepted publickey for deploy from 203.0.113.9 port 51000 ssh2'),
      '203.0.113.9',
    );
    assert.equal(acceptedFrom('sshd[77]: Accepted password for root from 2001:db8::42 port 22 ssh2'), '2001:db8::42');
    assert.equal(
      acceptedFrom('sshd[77]: Accepted keyboard-interactive/pam for a from 198.51.100.3 port 1 ssh2'),
      '198.51.100.3',
    );
    assert.equal(acceptedFrom('sshd[77]: Failed password for root from 198.51.100.11 port 2 ssh2'), null);
    // A user name cannot forge the address: the peer is what follows "from", after the user.
    assert.equal(acceptedFrom('sshd[77]: Invalid user Accepted from 198.51.100.12 port 3'), null);
    assert.equal(acceptedFrom('Accepted password for x from 10.0.0.0/8 port 1 ssh2'), null);
  });
});
