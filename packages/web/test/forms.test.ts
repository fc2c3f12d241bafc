import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { checkRule, type RuleForm, ruleForm } from '../src/features/alerts/api/create-rule';
import { checkRegister } from '../src/features/auth/api/register';
import { checkSignIn } from '../src/features/auth/api/sign-in';
import { checkBlockPattern, toBlockPattern } from '../src/features/protection/api/add-block-pattern';
import { checkListEntry, parseImport, toListEntry } from '../src/features/protection/api/add-list-entry';
import { checkAddServer, pinOf } from '../src/features/servers/api/add-server';
import { checkNameAndTags } from '../src/features/servers/api/update-server';
import { checkCreateTicket } from '../src/features/tickets/api/create-ticket';
import { checkSetWebhook } from '../src/features/webhook/api/set-webhook';

const errorsOf = (result: { ok: boolean; errors?: object }) => (result.ok ? {} : result.errors);

describe("form checks: the console's own schemas, its messages under each field", () => {
  test('register: required, email shape, password length', () => {
    assert.deepEqual(errorsOf(checkRegister({ name: '  ', email: 'x', password: 'short' })), {
      name: 'Must not be empty.',
      email: 'Enter an email address.',
      password: 'At least 8 characters.',
    });
    assert.deepEqual(errorsOf(checkRegister({ name: 'A', email: '', password: 'p'.repeat(257) })), {
      email: 'Enter an email address.',
      password: 'At most 256 characters.',
    });
    const ok = checkRegister({ name: ' Dana ', email: ' d@example.com ', password: 'correct horse' });
    assert.deepEqual(ok, { ok: true, value: { name: 'Dana', email: 'd@example.com', password: 'correct horse' } });
  });

  test('sign-in and tickets: length limits, product chosen', () => {
    assert.deepEqual(errorsOf(checkSignIn({ email: 'e'.repeat(255), password: '' })), {
      email: 'At most 254 characters.',
    });
    assert.deepEqual(errorsOf(checkCreateTicket({ product_id: '', subject: 's'.repeat(201), message: 'hi' })), {
      product_id: 'Enter an integer.',
      subject: 'At most 200 characters.',
    });
  });

  test('webhook and add-server addresses', () => {
    assert.deepEqual(errorsOf(checkSetWebhook({ url: 'ftp://x' })), { url: 'Enter an http(s) URL.' });
    assert.equal(checkSetWebhook({ url: 'https://hooks.example.com/x' }).ok, true);
    const bad = errorsOf(
      checkAddServer({ product_id: '1', name: 'web', api_url: 'nope', api_key: 'agk_short', tls_fingerprint: 'AB:CD' }),
    ) as Record<string, string>;
    assert.match(bad.api_url!, /^Enter an http or https URL/);
    assert.match(bad.api_key!, /^Enter the agent key \(agk_…\)/);
    const pin = errorsOf(
      checkAddServer({
        product_id: '1',
        name: 'web',
        api_url: 'https://203.0.113.7:9100',
        api_key: '',
        tls_fingerprint: 'AB:CD',
      }),
    ) as Record<string, string>;
    assert.match(pin.tls_fingerprint!, /^Enter the SHA-256 fingerprint the agent prints/);
    const good = checkAddServer({
      product_id: '1',
      name: 'web',
      api_url: 'https://203.0.113.7:9100',
      api_key: `agk_${'a'.repeat(32)}`,
      tls_fingerprint: '',
    });
    assert.equal(good.ok, true);
    assert.deepEqual(pinOf({ api_url: 'http://203.0.113.7:9100', tls_fingerprint: 'AA' }), {});
  });

  test('name and tags: a wrong tag is named by its place in the list', () => {
    const errors = errorsOf(checkNameAndTags({ name: 'web', tags: 'edge, Bad Tag!' })) as Record<string, string>;
    assert.match(errors.tags!, /^Item 3: expected 1 to 32 of a-z/);
    assert.deepEqual(checkNameAndTags({ name: ' web ', tags: 'Edge, eu-west' }), {
      ok: true,
      value: { name: 'web', tags: ['edge', 'eu-west'] },
    });
  });

  test('block pattern: a named ip group, a valid regex, whole numbers', () => {
    const values = {
      name: 'ssh',
      file: '/var/log/auth.log',
      regex: 'from \\S+',
      threshold: '0',
      window_s: 'x',
      ban_s: '60',
      source: 'file',
      journal: '',
    };
    assert.deepEqual(errorsOf(checkBlockPattern(values)), {
      regex: 'Include a named group for the address: (?<ip>…)',
      threshold: 'Hits: a whole number above 0.',
      window_s: 'Window: a whole number above 0.',
    });
    assert.deepEqual(errorsOf(checkBlockPattern({ ...values, regex: '(?<ip>[', threshold: '5', window_s: '60' })), {
      regex: 'Not a valid regular expression.',
    });
    const ok = checkBlockPattern({ ...values, regex: 'from (?<ip>\\S+)', threshold: '5', window_s: '60' });
    assert.ok(ok.ok);
    assert.equal(toBlockPattern(ok.value).threshold, 5);
    assert.equal(toBlockPattern(ok.value).source, 'file');
    assert.equal('journal' in toBlockPattern(ok.value), false, 'no journal field when none is given');
  });

  test("block pattern: source and journal, refused in the agent's words naming the field", () => {
    const values = {
      name: 'app',
      file: '/var/log/app.log',
      regex: 'denied for (?<ip>\\S+)',
      threshold: '5',
      window_s: '60',
      ban_s: '600',
      source: 'journal',
      journal: '',
    };
    assert.deepEqual(errorsOf(checkBlockPattern(values)), {
      journal: 'journal: expected the syslog identifiers or units to read, e.g. ["sshd", "ssh.service"]',
    });
    assert.deepEqual(errorsOf(checkBlockPattern({ ...values, journal: 'app.service, bad name!' })), {
      journal:
        'journal: expected 1 to 8 syslog identifiers or unit names (letters, digits, "@", ".", "_", ":", "/", "-"), e.g. ["sshd", "ssh.service"]',
    });
    assert.deepEqual(errorsOf(checkBlockPattern({ ...values, source: 'syslog' })), {
      source: 'source: expected "auto", "file" or "journal"',
    });
    const ok = checkBlockPattern({ ...values, journal: 'app.service,  postfix/smtpd' });
    assert.ok(ok.ok);
    assert.deepEqual(toBlockPattern(ok.value), {
      name: 'app',
      file: '/var/log/app.log',
      regex: 'denied for (?<ip>\\S+)',
      threshold: 5,
      window_s: 60,
      ban_s: 600,
      source: 'journal',
      journal: ['app.service', 'postfix/smtpd'],
    });
  });

  test('list entry: one IP or CIDR, a note, whole minutes', () => {
    assert.deepEqual(errorsOf(checkListEntry({ ip: '300.1.1.1', note: 'n'.repeat(201), ttl: '1.5' })), {
      ip: 'Enter one IP or CIDR, e.g. 203.0.113.7 or 198.51.100.0/24.',
      note: 'At most 200 characters.',
      ttl: 'Whole minutes, or empty for no expiry.',
    });
    assert.deepEqual(errorsOf(checkListEntry({ ip: '10.0.0.0/33', note: '', ttl: '' })), {
      ip: 'The prefix is 0 to 32.',
    });
    assert.equal(checkListEntry({ ip: '2001:db8::/32', note: '', ttl: '' }).ok, true);
    assert.deepEqual(toListEntry({ ip: ' 203.0.113.7 ', note: '', ttl: '5' }), { ip: '203.0.113.7', ttl_s: 300 });
    assert.deepEqual(parseImport('203.0.113.7 # office\nbad, 198.51.100.0/24'), {
      entries: ['203.0.113.7', '198.51.100.0/24'],
      invalid: ['bad'],
    });
  });

  test('alert rules: each kind sends only its own fields; errors name the field; a saved rule fills the form back', () => {
    const form: RuleForm = {
      name: ' Slow agent ',
      kind: 'unreachable',
      metric: 'disk',
      threshold: '90',
      minutes: '10',
      repeat_minutes: '30',
      server_ids: [],
      tags: [],
      channel_ids: [4],
      enabled: true,
    };
    assert.deepEqual(checkRule(form), {
      ok: true,
      body: {
        name: 'Slow agent',
        kind: 'unreachable',
        minutes: 10,
        repeat_minutes: 30,
        server_ids: null,
        tags: null,
        channel_ids: [4],
        enabled: true,
      },
    });
    assert.deepEqual(checkRule({ ...form, kind: 'benchmark_unverified', enabled: false }), {
      ok: true,
      body: {
        name: 'Slow agent',
        kind: 'benchmark_unverified',
        repeat_minutes: 0,
        server_ids: null,
        tags: null,
        channel_ids: [4],
        enabled: false,
      },
    });
    assert.deepEqual(checkRule({ ...form, minutes: '2000' }), {
      ok: false,
      field: 'minutes',
      error: 'Minutes: Enter 0 to 1440.',
    });
    assert.deepEqual(checkRule({ ...form, kind: 'metric', threshold: '120' }), {
      ok: false,
      field: 'threshold',
      error: 'Threshold: Enter 0 to 100 for disk.',
    });
    assert.deepEqual(checkRule({ ...form, channel_ids: [] }), {
      ok: false,
      field: 'channel_ids',
      error: 'Channels: Enter at least one channel.',
    });
    const saved = {
      id: 3,
      name: 'Disk',
      kind: 'metric' as const,
      metric: 'disk' as const,
      threshold: 85,
      minutes: 5,
      repeat_minutes: 60,
      server_ids: [7],
      tags: ['db'],
      channel_ids: [4],
      enabled: false,
      created_at: 0,
    };
    const filled = ruleForm(saved);
    assert.deepEqual(checkRule(filled), {
      ok: true,
      body: {
        name: 'Disk',
        kind: 'metric',
        metric: 'disk',
        threshold: 85,
        minutes: 5,
        repeat_minutes: 60,
        server_ids: [7],
        tags: ['db'],
        channel_ids: [4],
        enabled: false,
      },
    });
  });
});
