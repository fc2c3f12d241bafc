import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { after, before, describe, test } from 'node:test';
import {
  type AgentProcess,
  type ConsoleProcess,
  eventually,
  startAgent,
  startConsoleProcess,
  tempDir,
} from './support/processes.js';

/** The agents' earlier back-off: doubling from the interval up to 300 s (docs/agent.md, "Check-ins"). */
const oldDelayS = (intervalS: number, failures: number) => Math.min(intervalS * 2 ** failures, 300);

interface CheckinStatus {
  state: string;
  interval_s: number;
  consecutive_failures: number;
  last_attempt_at: number | null;
  last_success_at: number | null;
  backoff_s: number | null;
  next_attempt_at: number | null;
  buffered_samples: number;
}

/**
 * A real console stopped and started again under a real agent: the agent is back one short wait
 * after the console (not after a grown back-off), and the samples it took meanwhile are in history.
 */
describe('coming back after a console outage', () => {
  const dir = tempDir('palisade-outage-');
  let port = 0;
  let consoleProc: ConsoleProcess | undefined;
  let agent: AgentProcess;
  let cookie = '';
  let serverId = 0;
  const env = () => ({
    PALISADE_DATA_DIR: dir.path,
    PALISADE_PORT: String(port),
    PALISADE_ALLOW_PRIVATE_TARGETS: '1',
    PALISADE_BOOTSTRAP_ADMIN: '0',
    PALISADE_CHECKIN_INTERVAL_S: '5',
  });
  const base = () => `http://127.0.0.1:${port}`;
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${base()}${path}`, {
      method,
      headers: { cookie, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    // biome-ignore lint/suspicious/noExplicitAny: test answers are checked field by field
    return { status: res.status, body: (await res.json()) as any, headers: res.headers };
  };
  const checkin = async (): Promise<CheckinStatus> => {
    const res = await fetch(`${agent.url}/metrics`, { headers: { authorization: `Bearer ${agent.key}` } });
    return ((await res.json()) as { checkin: CheckinStatus }).checkin;
  };

  before(async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    port = (probe.address() as { port: number }).port;
    await new Promise((resolve) => probe.close(resolve));
    consoleProc = await startConsoleProcess(env());
    agent = await startAgent({ 'checkin.interval_s': '5', 'metrics.interval_s': '1' });
    const reg = await fetch(`${base()}/api/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: `outage-${process.pid}@example.com`, password: 'outage-password', name: 'O' }),
    });
    assert.equal(reg.status, 201);
    cookie = reg.headers.get('set-cookie')!.split(';')[0]!;
    const product = (await call('POST', '/api/products', { catalog_id: 1 })).body.data.product;
    const added = await call('POST', '/api/servers', {
      product_id: product.id,
      name: 'outage-1',
      api_url: agent.url,
      api_key: agent.key,
    });
    assert.equal(added.status, 201, JSON.stringify(added.body));
    serverId = added.body.data.server.id;
    await eventually('the first check-in', async () => ((await checkin()).state === 'ok' ? true : undefined));
  });

  after(async () => {
    await agent?.stop();
    await consoleProc?.kill();
    dir.remove();
  });

  test('the agent is back one short wait after the console, and the outage is in the history', async () => {
    // The chart's bucket for this range: the outage must span two of them for one to lie wholly inside it.
    const shape = await call('GET', `/api/servers/${serverId}/section?name=history&range=1h`);
    assert.equal(shape.status, 200, JSON.stringify(shape.body));
    const bucketMs = (shape.body.data as { bucket_ms: number }).bucket_ms;
    await consoleProc!.kill();
    consoleProc = undefined;
    const down = await checkin();
    const outageFrom = down.last_success_at!;

    // Several failed check-ins: under the old back-off the wait would now be 80 s or more.
    // On a fast machine four failures take less than two buckets: keep failing until the outage spans two.
    const failing = await eventually(
      'four failed check-ins with samples buffered, over two chart buckets',
      async () => {
        const s = await checkin();
        const long = s.last_attempt_at! - outageFrom >= 2 * bucketMs;
        return s.consecutive_failures >= 4 && s.buffered_samples >= 4 && long ? s : undefined;
      },
      90_000,
    );
    assert.equal(failing.state, 'backing_off');
    assert.ok(failing.backoff_s! <= failing.interval_s, `back-off ${failing.backoff_s} s ≤ the interval`);
    assert.ok(
      failing.next_attempt_at! - failing.last_attempt_at! <= failing.interval_s * 1000,
      'the next try is at most one interval away',
    );

    consoleProc = await startConsoleProcess(env());
    const before = await checkin();
    const back = await eventually(
      'a check-in after the restart',
      async () => {
        const s = await checkin();
        return s.state === 'ok' && s.buffered_samples === 0 ? s : undefined;
      },
      60_000,
    );
    // The old back-off after this many failures would not even have tried again by now.
    const oldNext = before.last_attempt_at! + oldDelayS(before.interval_s, before.consecutive_failures) * 1000;
    assert.ok(
      back.last_success_at! < oldNext,
      `back at ${back.last_success_at}, before the old back-off's next try at ${oldNext}`,
    );
    assert.ok(back.last_success_at! <= before.next_attempt_at! + back.interval_s * 1000);
    const outageTo = back.last_success_at!;

    const detail = await call('GET', `/api/servers/${serverId}`);
    assert.equal(detail.status, 200);
    const history = await call('GET', `/api/servers/${serverId}/section?name=history&range=1h`);
    assert.equal(history.status, 200, JSON.stringify(history.body));
    const { samples, bucket_ms: bucket } = history.body.data as { samples: { ts: number }[]; bucket_ms: number };
    // A chart bucket wholly inside the outage can only hold samples the agent buffered and sent later.
    const inside = samples.filter((s) => s.ts >= outageFrom && s.ts + bucket <= outageTo);
    assert.ok(
      inside.length >= 1,
      `history has samples inside the outage ${outageFrom}..${outageTo}: ${JSON.stringify(samples.map((s) => s.ts))}`,
    );
  });
});
