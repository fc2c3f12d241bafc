import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkinRequestSchema, parseCheckinRequest } from '../src/checkin.js';

/** The body an agent sends (packages/agent/src/checkin.ts), as bench/checkin-ingest.mjs posts it. */
const agentBody = () => ({
  agent_version: '0.1.0',
  hostname: 'agent-1',
  public_ip: '203.0.113.9',
  facts: { os: 'Debian GNU/Linux 12', kernel: '6.1.0', cores: 2, arch: 'x64', mem_total_mb: 4000 },
  sample: {
    ts: 1_764_355_200_000,
    cpu_pct: 12.5,
    mem_used_mb: 1500,
    mem_total_mb: 4000,
    disk_used_pct: 55,
    disk_mount: '/',
    load1: 0.4,
    rx_bps: 12000,
    tx_bps: 8000,
    rx_pps: 40,
    tx_pps: 30,
    net_errors_ps: 0,
    attacks_active: 1,
    note: 'x',
    gone: null,
  },
  protection: { backend: 'monitor' },
  alerter: { webhook_set: false, queued: 0 },
});

/** parseCheckinRequest answers as zod does: accepted with an equal value (keys in the same order), or zod's first issue. */
function assertSameAsZod(body: unknown, label: string) {
  const zod = checkinRequestSchema.safeParse(body);
  const ours = parseCheckinRequest(body);
  assert.equal(ours.success, zod.success, `${label}: accepted by one and not the other`);
  if (ours.success && zod.success) {
    assert.equal(JSON.stringify(ours.data), JSON.stringify(zod.data), `${label}: a different value`);
  } else if (!ours.success && !zod.success) {
    assert.deepEqual(ours.error.issues[0], zod.error.issues[0], `${label}: a different issue`);
  }
}

/** Whether the answer was made without zod: zod copies every object, the fast path keeps the JSON sections. */
const fast = (body: { facts?: unknown }) => {
  const parsed = parseCheckinRequest(body);
  return parsed.success && parsed.data.facts === body.facts;
};

test('a plainly valid check-in is checked without zod, and answers what zod answers', () => {
  // The agent sends disk_mount among the eight figures (packages/agent/src/checkin/body.ts): zod moves it after them.
  const body = agentBody();
  assert.ok(fast(body), 'the agent body takes the fast path');
  assertSameAsZod(body, 'agent body');
  const { disk_mount, ...figures } = body.sample;
  const inOrder = { ...body, sample: { ...figures, disk_mount } };
  const parsed = parseCheckinRequest(inOrder);
  assert.ok(parsed.success && parsed.data.sample === inOrder.sample, 'a sample in the schema order is not copied');
  assertSameAsZod(inOrder, 'sample in order');
  const withMore = {
    ...agentBody(),
    public_ip: null,
    past_samples: [agentBody().sample, { ...agentBody().sample, ts: 1_764_355_100_000 }],
    bans: [
      { ip: '198.51.100.7', kind: 'log_pattern', attack_id: null, pattern: 'sshd', at: 1_764_355_200_000, ttl_s: 600 },
    ],
  };
  assert.ok(fast(withMore), 'past samples and bans on the fast path too');
  assertSameAsZod(withMore, 'with past samples and bans');
});

test('every variation of a check-in is accepted or refused exactly as zod does, with the same value or issue', () => {
  const values: unknown[] = [
    undefined,
    null,
    0,
    -1,
    0.5,
    1,
    100,
    100.5,
    101,
    2 ** 53,
    1.5e12,
    1_764_355_200_000,
    '',
    'x',
    'x'.repeat(64),
    'x'.repeat(65),
    'x'.repeat(257),
    '203.0.113.9',
    '2001:db8::1',
    '::1\n',
    '010.0.0.1',
    '256.1.1.1',
    true,
    [],
    {},
    { a: 1 },
    { ['k'.repeat(65)]: 1 },
    { big: 'x'.repeat(5000) },
    [1],
    Number.MAX_VALUE,
  ];
  const paths: string[][] = [
    ['agent_version'],
    ['hostname'],
    ['public_ip'],
    ['facts'],
    ['sample'],
    ['protection'],
    ['alerter'],
    ['bans'],
    ['update'],
    ['past_samples'],
    ['extra_key'],
    ['sample', 'ts'],
    ['sample', 'cpu_pct'],
    ['sample', 'mem_used_mb'],
    ['sample', 'mem_total_mb'],
    ['sample', 'disk_used_pct'],
    ['sample', 'load1'],
    ['sample', 'rx_bps'],
    ['sample', 'tx_bps'],
    ['sample', 'rx_pps'],
    ['sample', 'other'],
    ['facts', 'os'],
  ];
  let taken = 0;
  for (const path of paths) {
    for (const value of values) {
      const body = agentBody() as Record<string, unknown>;
      let at = body;
      for (const key of path.slice(0, -1)) at = at[key] as Record<string, unknown>;
      at[path.at(-1)!] = value;
      assertSameAsZod(body, `${path.join('.')} = ${JSON.stringify(value)?.slice(0, 40)}`);
      if (fast(body)) taken += 1;
    }
  }
  // Key orders zod would change, and a ban with a key too many or missing.
  const { sample, ...rest } = agentBody();
  const { ts, ...figures } = sample;
  for (const [label, body] of [
    ['sample first', { sample, ...rest }],
    ['ts last in the sample', { ...rest, sample: { ...figures, ts } }],
    ['an extra figure first', { ...rest, sample: { extra: 1, ...sample } }],
    ['an unknown key, dropped', { ...agentBody(), later: { a: 1 } }],
    [
      'a ban with a key too many',
      {
        ...agentBody(),
        bans: [{ ip: '198.51.100.7', kind: 'k', attack_id: null, pattern: null, at: 1, ttl_s: null, x: 1 }],
      },
    ],
    [
      'a ban without ttl_s',
      { ...agentBody(), bans: [{ ip: '198.51.100.7', kind: 'k', attack_id: null, pattern: null, at: 1 }] },
    ],
    [
      'a ban in another order',
      { ...agentBody(), bans: [{ kind: 'k', ip: '198.51.100.7', attack_id: null, pattern: null, at: 1, ttl_s: 5 }] },
    ],
    ['121 past samples', { ...agentBody(), past_samples: Array.from({ length: 121 }, () => sample) }],
    ['a bad past sample', { ...agentBody(), past_samples: [{ ...sample, cpu_pct: 170 }] }],
    ['an update report', { ...agentBody(), update: { version: '0.2.0', state: 'applied' } }],
  ] as const) {
    assertSameAsZod(body, label);
  }
  // The fast path is taken for the valid variations it can tell at once (not only the plain body).
  assert.ok(taken >= 100, `fast path taken ${taken} times`);
});
