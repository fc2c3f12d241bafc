// The check-in loop with its transport and timer swapped out: no console is faked, only answers.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { generateToken } from '@palisade/protocol';
import {
  BUFFER_MAX,
  createCheckin,
  FIRST_RETRY_S,
  jittered,
  nextDelayS,
  PAST_PER_CHECKIN,
  parseAnswer,
} from '../src/checkin/checkin.js';
import { createJobRunner } from '../src/jobs/job-runner.js';
import { OutboundError, type PostJson } from '../src/lib/outbound.js';

function harness(answers: (() => { status: number; body: string })[], sampleTs: () => number = () => 1000) {
  const calls: { url: string; body: Record<string, unknown>; headers: Record<string, string> }[] = [];
  const planned: number[] = [];
  const logs: string[] = [];
  const accepted: unknown[] = [];
  const post: PostJson = async (url, body, headers) => {
    calls.push({ url, body: JSON.parse(body), headers });
    const next = answers.shift();
    if (!next) throw new Error('no more answers');
    return next();
  };
  const checkin = createCheckin({
    clock: () => 1000,
    settings: { intervalS: 10, timeoutMs: 1000 },
    post,
    body: () => ({ agent_version: '0.1.0', hostname: 'h', sample: { ts: sampleTs(), cpu_pct: 1 } }),
    version: '0.1.0',
    jobs: { accept: (j) => accepted.push(j) },
    log: (level, message) => logs.push(`${level} ${message}`),
    schedule: (_fn, ms) => {
      planned.push(ms);
      return () => {};
    },
  });
  return { checkin, calls, planned, logs, accepted };
}

const enrolment = { console_url: 'http://console.test', token: generateToken('daemon'), enrolled_at: 1 };
const down = () => {
  throw new OutboundError('unreachable', 'connect ECONNREFUSED 127.0.0.1:1');
};

test('back-off starts at 5 s, doubles, and never exceeds the interval; waits are jittered over half of it', () => {
  assert.equal(FIRST_RETRY_S, 5);
  assert.deepEqual(
    [0, 1, 2, 3, 4, 5, 9].map((f) => nextDelayS(30, f)),
    [30, 5, 10, 20, 30, 30, 30],
  );
  assert.equal(nextDelayS(600, 7), 320, 'a long interval still doubles from 5 s');
  assert.equal(nextDelayS(2, 3), 2, 'never longer than the interval');
  assert.equal(
    jittered(30_000, () => 0),
    15_000,
  );
  assert.equal(
    jittered(30_000, () => 0.999_999),
    30_000,
  );
});

test('a check-in posts to /api/agent/checkin with the daemon token; the answer sets the interval and hands jobs over', async () => {
  const h = harness([
    () => ({ status: 200, body: JSON.stringify({ data: { interval_s: 45, jobs: [{ kind: 'benchmark', id: 7 }] } }) }),
  ]);
  h.checkin.start(enrolment);
  assert.deepEqual(h.planned, [0], 'the first check-in is immediate');
  await h.checkin.attempt();
  assert.equal(h.calls[0]!.url, 'http://console.test/api/agent/checkin');
  assert.equal(h.calls[0]!.headers.authorization, `Bearer ${enrolment.token}`);
  assert.equal(h.calls[0]!.body.hostname, 'h');
  assert.deepEqual(h.accepted, [{ kind: 'benchmark', id: 7 }]);
  const s = h.checkin.status();
  assert.equal(s.state, 'ok');
  assert.equal(s.interval_s, 45);
  assert.equal(s.last_success_at, 1000);
  assert.equal(h.planned.at(-1), 45_000);
});

test('console down or 5xx: back-off up to the interval, then back to the interval once it answers', async () => {
  const h = harness([
    down,
    () => ({ status: 503, body: '{"error":"maintenance"}' }),
    down,
    () => ({ status: 200, body: '{"data":{}}' }),
  ]);
  h.checkin.start(enrolment);
  await h.checkin.attempt();
  let s = h.checkin.status();
  assert.equal(s.state, 'backing_off');
  assert.equal(s.last_error, 'could not reach the console: connect ECONNREFUSED 127.0.0.1:1');
  assert.equal(s.backoff_s, 5);
  await h.checkin.attempt();
  s = h.checkin.status();
  assert.equal(s.last_error, 'the console answered HTTP 503: maintenance');
  assert.equal(s.backoff_s, 10, 'capped at the interval (10 s here)');
  await h.checkin.attempt();
  assert.equal(h.checkin.status().backoff_s, 10);
  // A wait is between half and all of the back-off.
  const waits = h.planned.slice(1);
  for (const [i, base] of [5000, 10_000, 10_000].entries()) {
    assert.ok(waits[i]! >= base / 2 && waits[i]! <= base, `wait ${i}: ${waits[i]}`);
  }
  await h.checkin.attempt();
  s = h.checkin.status();
  assert.equal(s.state, 'ok');
  assert.equal(s.consecutive_failures, 0);
  assert.equal(s.last_error, null);
  assert.equal(h.planned.at(-1), 10_000);
  assert.equal(
    h.logs.filter((l) => l.startsWith('warn check-in failed')).length,
    1,
    'one warning per outage, not one per try',
  );
});

test('samples of failed check-ins are buffered (bounded, oldest dropped) and sent with the next ones', async () => {
  let ts = 0;
  const answers: (() => { status: number; body: string })[] = [];
  for (let i = 0; i < BUFFER_MAX + 5; i += 1) answers.push(down);
  answers.push(down); // the same sample time again: kept once
  for (let i = 0; i < 7; i += 1) answers.push(() => ({ status: 200, body: '{"data":{}}' }));
  const h = harness(answers, () => ts);
  h.checkin.start(enrolment);
  for (let i = 0; i < BUFFER_MAX + 5; i += 1) {
    ts = 1000 + i;
    await h.checkin.attempt();
  }
  await h.checkin.attempt();
  assert.equal(h.checkin.status().buffered_samples, BUFFER_MAX);
  ts = 50_000;
  await h.checkin.attempt();
  const first = h.calls.at(-1)!.body;
  const past = first.past_samples as { ts: number }[];
  assert.equal(past.length, PAST_PER_CHECKIN);
  assert.equal(past[0]!.ts, 1005, 'the oldest 5 were dropped');
  assert.equal((first.sample as { ts: number }).ts, 50_000, 'the current sample as usual');
  assert.equal(h.checkin.status().buffered_samples, BUFFER_MAX - PAST_PER_CHECKIN);
  assert.equal(h.planned.at(-1), 1000, 'the rest follows a second later, not an interval later');
  for (let i = 0; i < 5; i += 1) await h.checkin.attempt();
  assert.equal(h.checkin.status().buffered_samples, 0);
  // The six check-ins that were answered (the failed ones carried the buffer too).
  const sent = h.calls
    .slice(-6)
    .flatMap((c) => (c.body.past_samples as { ts: number }[] | undefined) ?? [])
    .map((p) => p.ts);
  assert.equal(sent.length, BUFFER_MAX);
  assert.equal(new Set(sent).size, BUFFER_MAX, 'each once');
  assert.equal(h.planned.at(-1), 10_000, 'then the interval again');
  await h.checkin.attempt();
  assert.equal(h.calls.at(-1)!.body.past_samples, undefined, 'nothing buffered, nothing extra sent');
});

test('a console that refuses the buffered samples (400) gets the check-in again without them', async () => {
  const h = harness([
    down,
    () => ({ status: 400, body: '{"error":"past_samples: at most 120 samples"}' }),
    () => ({ status: 200, body: '{"data":{}}' }),
  ]);
  h.checkin.start(enrolment);
  await h.checkin.attempt();
  await h.checkin.attempt();
  assert.equal(h.checkin.status().buffered_samples, 0);
  assert.equal(h.planned.at(-1), 0);
  assert.ok(h.logs.some((l) => l.startsWith('warn check-in: the console refused 1 buffered samples')));
  await h.checkin.attempt();
  assert.equal(h.calls.at(-1)!.body.past_samples, undefined);
  assert.equal(h.checkin.status().state, 'ok');
});

test('401 means revoked: logged clearly, no more check-ins until enrolled again', async () => {
  const h = harness([
    () => ({ status: 401, body: '{"error":"invalid daemon token"}' }),
    () => ({ status: 200, body: '{}' }),
  ]);
  h.checkin.start(enrolment);
  await h.checkin.attempt();
  const s = h.checkin.status();
  assert.equal(s.state, 'revoked');
  assert.match(s.last_error!, /HTTP 401/);
  assert.equal(s.next_attempt_at, null);
  assert.ok(h.logs.some((l) => l.startsWith('error check-in:') && l.includes('palisade-agent enroll')));
  const plannedBefore = h.planned.length;
  await h.checkin.attempt();
  assert.equal(h.calls.length, 1, 'no check-in after a revocation');
  assert.equal(h.planned.length, plannedBefore);
  h.checkin.start({ ...enrolment, token: generateToken('daemon') });
  await h.checkin.attempt();
  assert.equal(h.checkin.status().state, 'ok');
});

test('odd answers are not trusted', () => {
  assert.deepEqual(parseAnswer('not json'), { intervalS: null, jobs: [] });
  assert.deepEqual(parseAnswer('{"data":{"interval_s":0,"jobs":"x"}}'), { intervalS: null, jobs: [] });
  assert.deepEqual(parseAnswer('{"data":{"interval_s":2.5}}'), { intervalS: null, jobs: [] });
  assert.deepEqual(parseAnswer('{"data":{"interval_s":60,"jobs":[1]}}'), { intervalS: 60, jobs: [1] });
});

test('job runner: known kinds run once per id; unknown kinds are logged and ignored', async () => {
  const logs: string[] = [];
  const ran: unknown[] = [];
  const runner = createJobRunner({ benchmark: async (job) => void ran.push(job.id) }, (l, m) => logs.push(`${l} ${m}`));
  runner.accept({ kind: 'benchmark', id: 1 });
  runner.accept({ kind: 'benchmark', id: 1 });
  runner.accept({ kind: 'benchmark', id: 2 });
  runner.accept({ kind: 'reboot', id: 3 });
  runner.accept('junk');
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(ran, [1, 2]);
  assert.deepEqual(logs, [
    'warn check-in: ignoring a job of unknown kind "reboot"',
    'warn check-in: ignoring a job that is not an object',
  ]);
});
