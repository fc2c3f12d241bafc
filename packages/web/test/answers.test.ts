import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type DashboardResponseName, dashboardResponses } from '@palisade/protocol/dashboard';
import { getKeys } from '../src/features/keys/api/get-keys';
import { getSecurityEvents } from '../src/features/security-events/api/get-security-events';
import { explainCheck } from '../src/features/servers/api/test-connection';
import { getTicket } from '../src/features/tickets/api/get-ticket';
import { getTickets } from '../src/features/tickets/api/get-tickets';

/**
 * The fetchers read the console's answers as packages/protocol/src/dashboard.ts describes them:
 * every canned answer here is first checked against that schema, so a fixture cannot drift from
 * what the console sends.
 */
const answers = new Map<string, unknown>();
function answer(path: string, name: DashboardResponseName, body: unknown) {
  answers.set(path, dashboardResponses[name].parse(body));
}

const ticket = { id: 4, ref: 'T-ABC234', product_id: 1, subject: 'Disk', status: 'open', created_at: 1, updated_at: 2 };

describe('fetchers read the answers the protocol describes', () => {
  const realFetch = globalThis.fetch;
  before(() => {
    globalThis.fetch = async (input) => {
      const body = answers.get(String(input));
      return new Response(JSON.stringify(body ?? { error: 'not found', code: 'not_found' }), {
        status: body === undefined ? 404 : 200,
        headers: { 'content-type': 'application/json' },
      });
    };
  });
  after(() => {
    globalThis.fetch = realFetch;
  });

  test('lists come out of their envelope', async () => {
    const key = { id: 1, name: 'ci', last4: 'abcd', created_at: 1, last_used_at: null };
    answer('/api/keys', 'keys', { data: { keys: [key] } });
    assert.deepEqual(await getKeys(), [key]);
    const event = {
      id: 9,
      kind: 'login_failed',
      reason: 'wrong password',
      key_last4: null,
      method: 'POST',
      path: '/api/auth/login',
      ip: '203.0.113.9',
      created_at: 5,
    };
    answer('/api/security/events', 'securityEvents', { data: { events: [event], next_cursor: null, total: 1 } });
    assert.deepEqual(await getSecurityEvents(null), { items: [event], next_cursor: null, total: 1 });
    const listed = { ...ticket, account_email: 'a@example.com' };
    answer('/api/admin/tickets', 'tickets', { data: { tickets: [listed], next_cursor: 'WzIsNF0', total: 2 } });
    assert.deepEqual(await getTickets('admin', null), { items: [listed], next_cursor: 'WzIsNF0', total: 2 });
  });

  test('the next page is asked for with the cursor the page before gave', async () => {
    const older = { ...ticket, id: 3, ref: 'T-ABC233', updated_at: 1, account_email: 'b@example.com' };
    answer('/api/admin/tickets?cursor=WzIsNF0', 'tickets', { data: { tickets: [older], next_cursor: null, total: 2 } });
    assert.deepEqual(await getTickets('admin', 'WzIsNF0'), { items: [older], next_cursor: null, total: 2 });
  });

  test('a list answer without its paging fields is refused by the schema', () => {
    assert.throws(() => dashboardResponses.tickets.parse({ data: { tickets: [] } }));
  });

  test('a ticket comes with its messages, each with its body and who wrote it', async () => {
    const messages = [
      { id: 1, author_role: 'user', author_person_id: 3, author_name: 'Ann', body: 'The disk is full', created_at: 1 },
      { id: 2, author_role: 'admin', author_person_id: null, author_name: 'Ops', body: 'Cleaned up', created_at: 2 },
    ];
    answer('/api/tickets/4', 'ticket', { data: { ticket: { ...ticket, messages } } });
    const got = await getTicket('user', 4);
    assert.deepEqual(
      got.messages.map((m) => [m.author_role, m.body]),
      [
        ['user', 'The disk is full'],
        ['admin', 'Cleaned up'],
      ],
    );
  });

  test('the fields the console never sent are refused by the schema', () => {
    assert.throws(() =>
      dashboardResponses.ticket.parse({
        data: { ticket: { ...ticket, messages: [{ id: 1, from_admin: true, message: 'hi', created_at: 1 }] } },
      }),
    );
  });
});

describe('servers/api/test-connection: each answer of the check in plain words', () => {
  const check = (data: unknown) => dashboardResponses.connection.parse({ data }).data;

  test('an agent that answered', () => {
    const ok = explainCheck(check({ reachable: true, status: 200, latency_ms: 12, agent_version: '1.4.0' }));
    assert.deepEqual(ok, { ok: true, title: 'Connected', detail: 'Agent 1.4.0 answered in 12 ms.' });
    assert.equal(
      explainCheck(check({ reachable: true, status: 200, latency_ms: 3 })).detail,
      'Agent answered in 3 ms.',
    );
  });

  test('failures by status and error', () => {
    const failed = (status: number | null, error: string, reachable = status !== null) =>
      explainCheck(check({ reachable, status, latency_ms: status === null ? null : 5, error })).title;
    assert.equal(failed(401, 'the agent rejected the key'), 'Wrong key');
    assert.equal(failed(403, 'the agent refused the address'), 'Forbidden address');
    assert.equal(failed(null, 'agent unreachable: ECONNREFUSED'), 'Unreachable');
    assert.equal(failed(null, 'tls_fingerprint: the agent presented AB:CD'), 'Certificate mismatch');
    assert.equal(failed(200, 'this address answers, but not as a Palisade agent'), 'Not an agent');
  });
});
