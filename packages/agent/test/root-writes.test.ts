// The agent's Unix user must never become root. Root runs `palisade-agent key`
// and `enroll` beside a daemon whose state dir belongs to the agent's user (here: nobody); that
// user plants symbolic links at the names root writes — the temp file (`<file>.<pid>.tmp`, the pid
// made predictable by running the CLI as pid 1 of a new PID namespace) and the file itself —
// pointing at a root-owned victim. The victim keeps its owner, mode and contents; the state files
// are new regular files owned by the agent's user; a state dir others may write is refused.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { generateToken } from '@palisade/protocol';
import { rootSuite, runToEnd } from '@palisade/testkit';
import { AGENT_COMMAND, keyFrom, writeConfig } from './agent-process.js';

const suite = rootSuite('root writes', ['unshare', 'runuser'], '.ci/run runs the suite as root');
const USER = 'nobody';
const VICTIM_TEXT = 'root:secret-hash:19000:0:99999:7:::\n';

describe('root never writes, chmods or chowns through a link the agent user planted', suite, () => {
  let base = '';
  let stateDir = '';
  let configFile = '';
  let victim = '';
  let uid = 0;
  let gid = 0;
  /** Runs the CLI as root, as pid 1 of a new PID namespace, so its temp names are `<file>.1.tmp`. */
  const cli = (args: string[]) => runToEnd('unshare', ['--pid', '--fork', ...AGENT_COMMAND, ...args]);
  /** As the agent's user: `ln -sf target name`. */
  const plant = (target: string, name: string) =>
    execFileSync('runuser', ['-u', USER, '--', 'ln', '-sfn', target, join(stateDir, name)]);
  const victimIntact = () => {
    const st = lstatSync(victim);
    assert.equal(st.uid, 0, 'the victim is still owned by root');
    assert.equal(st.mode & 0o777, 0o640, 'the victim keeps its mode');
    assert.equal(readFileSync(victim, 'utf8'), VICTIM_TEXT, 'the victim keeps its contents');
  };
  const ownedByAgent = (name: string) => {
    const st = lstatSync(join(stateDir, name));
    assert.ok(st.isFile(), `${name} is a regular file, not a link`);
    assert.equal(st.uid, uid, `${name} belongs to the agent's user`);
    assert.equal(st.mode & 0o777, 0o600);
  };

  before(() => {
    uid = Number(execFileSync('id', ['-u', USER], { encoding: 'utf8' }).trim());
    gid = Number(execFileSync('id', ['-g', USER], { encoding: 'utf8' }).trim());
    base = mkdtempSync(join(tmpdir(), 'palisade-rootw-'));
    chmodSync(base, 0o755);
    stateDir = join(base, 'state');
    mkdirSync(stateDir, { mode: 0o700 });
    chownSync(stateDir, uid, gid);
    configFile = join(base, 'agent.conf');
    writeConfig(configFile, { 'metrics.listen': '127.0.0.1:0', 'protection.backend': 'monitor' });
    victim = join(base, 'shadow');
    writeFileSync(victim, VICTIM_TEXT, { mode: 0o640 });
    chmodSync(victim, 0o640);
  });
  after(() => {
    if (base) rmSync(base, { recursive: true, force: true });
  });

  test('`key` as root: links at the temp name and at the key file do not reach the victim', async () => {
    // A link where the key file belongs: root does not read through it, and says so.
    plant(victim, 'agent-key.json');
    const refused = await cli(['key', '--state-dir', stateDir, '--config', configFile]);
    assert.equal(refused.code, 1, refused.out);
    assert.match(refused.stderr, /agent-key\.json is a symbolic link, not a state file; remove it/);
    victimIntact();
    execFileSync('runuser', ['-u', USER, '--', 'rm', join(stateDir, 'agent-key.json')]);
    // A link at the temp name the CLI used to write (`<file>.<pid>.tmp`, pid 1 here).
    plant(victim, 'agent-key.json.1.tmp');
    const r = await cli(['key', '--state-dir', stateDir, '--config', configFile]);
    assert.equal(r.code, 0, r.out);
    assert.ok(keyFrom(r.stdout), r.out);
    victimIntact();
    ownedByAgent('agent-key.json');
    assert.match(readFileSync(join(stateDir, 'agent-key.json'), 'utf8'), /"sha256":"[0-9a-f]{64}"/);
  });

  test('`enroll` as root: the same links beside enrolment.json do not reach the victim', async () => {
    plant(victim, 'enrolment.json.1.tmp');
    plant(victim, 'enrolment.json');
    const r = await cli([
      'enroll',
      '--state-dir',
      stateDir,
      '--console',
      'http://127.0.0.1:1',
      '--token',
      generateToken('daemon'),
    ]);
    assert.equal(r.code, 0, r.out);
    victimIntact();
    ownedByAgent('enrolment.json');
  });

  test('a state dir other users may write is refused with a message naming it', async () => {
    chmodSync(stateDir, 0o777);
    try {
      const r = await cli(['key', '--state-dir', stateDir, '--config', configFile]);
      assert.notEqual(r.code, 0, r.out);
      assert.match(r.stderr, /writable by users other than its owner/);
      assert.ok(r.stderr.includes(stateDir), r.stderr);
      assert.equal(keyFrom(r.stdout), undefined, 'no key is shown when none was stored');
    } finally {
      chmodSync(stateDir, 0o700);
    }
    victimIntact();
  });
});
