import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CONTROL_PATHS } from '@palisade/protocol/control';
import { offerText, servicesToOffer } from '../src/features/protection/api/enable-found-services';
import {
  CONTROL_LIST_FIELD,
  controlKey,
  controlProblem,
  controlUrl,
  isControlPath,
  itemsOf,
  readAnswer,
} from '../src/features/protection/api/get-control';
import { ApiError, errorFromAnswer } from '../src/lib/api';

describe('features/protection/api/get-control', () => {
  test("the paths are the protocol's, and every list path is one of them", () => {
    for (const path of Object.keys(CONTROL_LIST_FIELD)) assert.ok(isControlPath(path), path);
    assert.equal(CONTROL_PATHS.length, 20);
    assert.equal(isControlPath('Whitelist'), false);
    assert.equal(controlUrl(3, 'attacks/blacklist/status'), '/api/servers/3/control?path=attacks%2Fblacklist%2Fstatus');
    assert.deepEqual(controlKey(3, 'blacklist'), ['server', 3, 'control', 'blacklist']);
  });

  test("an agent's answer is read with the path's schema from the protocol, and its items from the known field", () => {
    const entries = [{ ip: '203.0.113.7', source: 'manual', added_at: 1 }];
    const read = readAnswer('blacklist', { entries, other: [{ ip: 'x' }] });
    assert.deepEqual(itemsOf('blacklist', read), entries);
    assert.deepEqual(itemsOf('attacks', readAnswer('attacks', { attacks: [], active: 0, total: 0 })), []);
    const task = {
      task: 'autofetch',
      what: 'fetch',
      cron: null,
      next_run_at: null,
      last_run_at: null,
      last_error: null,
    };
    assert.deepEqual(itemsOf('schedule', readAnswer('schedule', { schedule: [task] })), [task]);
    // A wrong shape is an error naming the problem, never an empty list or a half-drawn panel.
    assert.throws(() => readAnswer('schedule', { tasks: [task] }), /answer to schedule .*schedule: /);
    assert.throws(() => readAnswer('whitelist', [{ ip: '203.0.113.7' }]), /answer to whitelist/);
    assert.throws(() => readAnswer('blacklist', { entries: [{ ip: '203.0.113.7' }] }), /entries\[0\]\.source/);
    assert.throws(
      () => readAnswer('attacks/blacklist/status', { state: 'paused', attack_id: null }),
      /answer to attacks\/blacklist\/status/,
    );
  });

  test('what a failed call means: by status (and code), never by the words', () => {
    assert.equal(controlProblem(errorFromAnswer(403, { error: 'refused' }, null)).kind, 'forbidden');
    assert.equal(
      controlProblem(errorFromAnswer(403, { error: 'permission', code: 'agent_refused' }, null)).kind,
      'other',
    );
    assert.equal(controlProblem(new ApiError(404, 'no route')).kind, 'missing');
    assert.equal(controlProblem(new ApiError(502, 'agent unreachable')).kind, 'down');
  });
});

describe('features/protection/api/enable-found-services', () => {
  const shipped = { description: '', file: '/var/log/x', threshold: 5, window_s: 60, ban_s: 60 };
  const answer = {
    patterns: [
      {
        name: 'nginx-auth',
        file: '/x',
        regex: '(?<ip>x)',
        threshold: 5,
        window_s: 60,
        ban_s: 60,
        matches: 0,
        bans: 0,
        file_error: null,
      },
    ],
    shipped: [{ name: 'sshd', ...shipped }],
    services: [
      { service: 'sshd', patterns: ['sshd'], found: '/usr/sbin/sshd', enabled: false },
      { service: 'nginx', patterns: ['nginx-auth', 'http-scan'], found: '/usr/sbin/nginx', enabled: false },
      { service: 'apache', patterns: ['apache-auth', 'http-scan-apache'], found: null, enabled: false },
      { service: 'postfix', patterns: ['postfix'], found: '/usr/sbin/postfix', enabled: true },
    ],
  };

  test('offers the services found whose patterns are not all enabled, with the patterns still to enable', () => {
    const offers = servicesToOffer(answer);
    assert.deepEqual(offers, [
      { service: 'sshd', found: '/usr/sbin/sshd', patterns: ['sshd'] },
      { service: 'nginx', found: '/usr/sbin/nginx', patterns: ['http-scan'] },
    ]);
    assert.equal(offerText(offers), 'sshd and nginx found: enable their patterns');
    assert.equal(offerText(offers.slice(0, 1)), 'sshd found: enable its patterns');
    assert.equal(
      offerText([...offers, { service: 'dovecot', found: '/usr/sbin/dovecot', patterns: ['dovecot'] }]),
      'sshd, nginx and dovecot found: enable their patterns',
    );
  });

  test('an agent that reports no services is offered nothing', () => {
    const { services: _services, ...older } = answer;
    assert.deepEqual(servicesToOffer(older), []);
  });
});
