import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type ConsoleProcess, startConsoleProcess } from '@palisade/console/test-support';
import { type ChangePasswordInput, checkChangePassword } from '../src/features/account/api/change-password';
import { type ChannelForm, channelBody, checkChannel } from '../src/features/alerts/api/create-channel';
import { checkRule, type RuleForm, ruleBody } from '../src/features/alerts/api/create-rule';
import { checkRegister, type RegisterInput, registerBody } from '../src/features/auth/api/register';
import { checkSignIn, type SignInInput } from '../src/features/auth/api/sign-in';
import { checkCreateKey } from '../src/features/keys/api/create-key';
import {
  type AddServerValues,
  addServerBody,
  checkAddServer,
  checkConnection,
  connectionBody,
} from '../src/features/servers/api/add-server';
import { checkRunBenchmark } from '../src/features/servers/api/run-benchmark';
import { checkNameAndTags, checkUpdateKey, tagList } from '../src/features/servers/api/update-server';
import {
  type CreateTicketValues,
  checkCreateTicket,
  createTicketBody,
} from '../src/features/tickets/api/create-ticket';
import { checkReply } from '../src/features/tickets/api/reply-ticket';
import { checkCreateToken } from '../src/features/tokens/api/create-token';
import { checkSetWebhook } from '../src/features/webhook/api/set-webhook';

/**
 * One table, run against the dashboard's form checks and against a real console: for each input,
 * the form refuses it naming the field, and the console's route answers 400 naming the same field.
 * Both check with the schemas in packages/protocol/src/requests, so they cannot drift apart.
 */
interface Form<V> {
  name: string;
  /** `METHOD path` the form's body goes to. */
  route: string;
  /** The fields the form refuses; none when it would send the body. */
  refused(values: V): string[];
  /** The body the form would send. */
  body(values: V): unknown;
}

type Checked = { ok: true } | { ok: false; errors: object } | { ok: false; field: string };
const fieldsOf = (checked: Checked) =>
  checked.ok ? [] : 'field' in checked ? [checked.field] : Object.keys(checked.errors);

function form<V>(name: string, route: string, check: (values: V) => Checked, body: (values: V) => unknown): Form<V> {
  return { name, route, refused: (values) => fieldsOf(check(values)), body };
}

const same = <V>(values: V) => values;

const register = form<RegisterInput>('register', 'POST /api/auth/register', checkRegister, registerBody);
const signIn = form<SignInInput>('sign in', 'POST /api/auth/login', checkSignIn, same);
const webhook = form('webhook', 'PUT /api/account/webhook', checkSetWebhook, same);
const password = form<ChangePasswordInput>(
  'change password',
  'POST /api/account/password',
  checkChangePassword,
  ({ old_password, new_password }) => ({ old_password, new_password }),
);
const token = form('new token', 'POST /api/tokens', checkCreateToken, same);
const key = form('new signing key', 'POST /api/keys', checkCreateKey, same);
const ticket = form<CreateTicketValues>('new ticket', 'POST /api/tickets', checkCreateTicket, createTicketBody);
const reply = form('ticket reply', 'POST /api/tickets/1/messages', checkReply, same);
const addServer = form<AddServerValues>('add server', 'POST /api/servers', checkAddServer, addServerBody);
const tryServer = form<AddServerValues>('test connection', 'POST /api/servers/test', checkConnection, connectionBody);
const nameAndTags = form<{ name: string; tags: string }>(
  'name and tags',
  'PATCH /api/servers/1',
  checkNameAndTags,
  ({ name, tags }) => ({ name, tags: tagList(tags) }),
);
const agentKey = form('agent key', 'PATCH /api/servers/1', checkUpdateKey, same);
const benchmark = form('benchmark run', 'POST /api/servers/1/benchmarks', checkRunBenchmark, same);
const rule = form<RuleForm>('alert rule', 'POST /api/alerts/rules', checkRule, ruleBody);
const channel = form<ChannelForm>('alert channel', 'POST /api/alerts/channels', checkChannel, channelBody);

const server: AddServerValues = {
  product_id: '1',
  name: 'web-1',
  api_url: 'http://203.0.113.7:9100',
  api_key: `agk_${'a'.repeat(32)}`,
  tls_fingerprint: '',
};
const scoreRule: RuleForm = {
  name: 'Score',
  kind: 'score',
  metric: 'disk',
  threshold: '700',
  minutes: '0',
  repeat_minutes: '0',
  server_ids: [],
  tags: [],
  channel_ids: [1],
  enabled: true,
};

interface Row {
  form: Form<never>;
  values: unknown;
  field: string;
}
const row = <V>(f: Form<V>, values: V, field: string): Row => ({ form: f as Form<never>, values, field });

const table: Row[] = [
  row(register, { name: 'Dana', email: 'not-an-address', password: 'correct horse' }, 'email'),
  row(register, { name: 'Dana', email: 'd@example.com', password: 'short' }, 'password'),
  row(signIn, { email: `${'e'.repeat(250)}@x.io`, password: 'x' }, 'email'),
  row(webhook, { url: 'ftp://hooks.example.com/x' }, 'url'),
  row(password, { old_password: '', new_password: 'long enough', repeat: 'long enough' }, 'old_password'),
  row(password, { old_password: 'old one', new_password: 'p'.repeat(257), repeat: 'p'.repeat(257) }, 'new_password'),
  row(token, { name: '   ' }, 'name'),
  row(key, { name: 'k'.repeat(101) }, 'name'),
  row(ticket, { product_id: '', subject: 'Help', message: 'It broke' }, 'product_id'),
  row(ticket, { product_id: '1', subject: 's'.repeat(201), message: 'It broke' }, 'subject'),
  row(reply, { message: ' \n ' }, 'message'),
  row(addServer, { ...server, name: '' }, 'name'),
  row(addServer, { ...server, api_url: 'nope' }, 'api_url'),
  row(addServer, { ...server, api_key: 'agk_short' }, 'api_key'),
  row(tryServer, { ...server, api_url: 'https://203.0.113.7:9100', tls_fingerprint: 'AB:CD' }, 'tls_fingerprint'),
  row(nameAndTags, { name: 'web-1', tags: 'web, Not_A-Tag!' }, 'tags'),
  row(agentKey, { api_key: 'not a key' }, 'api_key'),
  row(benchmark, { label: '' }, 'label'),
  // The dashboard once took 0 for a score rule while the console asked for 1 to 1000.
  row(rule, { ...scoreRule, threshold: '0' }, 'threshold'),
  row(rule, { ...scoreRule, threshold: '' }, 'threshold'),
  row(rule, { ...scoreRule, kind: 'metric', metric: 'cpu', threshold: '101' }, 'threshold'),
  row(rule, { ...scoreRule, kind: 'unreachable', minutes: '1441' }, 'minutes'),
  row(rule, { ...scoreRule, repeat_minutes: '1.5' }, 'repeat_minutes'),
  row(rule, { ...scoreRule, channel_ids: [] }, 'channel_ids'),
  row(channel, { name: 'ops', kind: 'slack', target: 'hooks.slack.com/x' }, 'url'),
  row(channel, { name: 'ops', kind: 'email', target: 'ops-at-example.com' }, 'email'),
  row(channel, { name: '', kind: 'webhook', target: '' }, 'name'),
];

describe('one table for the dashboard forms and the console routes: both refuse the same inputs, naming the field', () => {
  let consoleProc: ConsoleProcess;
  let dataDir: string;
  let cookie = '';

  const send = async (route: string, body: unknown) => {
    const [method, path] = route.split(' ') as [string, string];
    const res = await fetch(`${consoleProc.url}${path}`, {
      method,
      headers: { 'content-type': 'application/json', cookie },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as { error?: string } };
  };

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'palisade-web-table-'));
    consoleProc = await startConsoleProcess({ PALISADE_DATA_DIR: dataDir, PALISADE_BOOTSTRAP_ADMIN: '0' });
    const res = await fetch(`${consoleProc.url}/api/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'table@example.com', password: 'correct horse battery', name: 'Table' }),
    });
    assert.equal(res.status, 201, await res.clone().text());
    cookie = /pl_session=[^;]*/.exec(res.headers.getSetCookie().join('\n'))?.[0] ?? '';
    assert.ok(cookie, 'no session cookie');
  });

  after(async () => {
    await consoleProc?.kill();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  for (const { form: f, values, field } of table) {
    test(`${f.name}: ${JSON.stringify(values).slice(0, 80)} → ${field}`, async () => {
      const v = values as never;
      assert.deepEqual(f.refused(v).includes(field), true, `the form refuses ${f.refused(v).join(', ') || 'nothing'}`);
      const answer = await send(f.route, f.body(v));
      assert.equal(answer.status, 400, `${f.route} answered ${answer.status} ${JSON.stringify(answer.body)}`);
      // A list's item is named with its index: `tags.1: …`.
      assert.match(answer.body.error ?? '', new RegExp(`^${field}(\\.\\d+)?: `));
    });
  }
});
