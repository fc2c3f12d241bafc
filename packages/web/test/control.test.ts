import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CONTROL_PATHS } from '@palisade/protocol/control';
import {
  CONTROL_LIST_FIELD,
  controlKey,
  controlProblem,
  controlUrl,
  isControlPath,
  itemsOf,
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

  test('a list answer is read from its known field, not from the first array found', () => {
    const entries = [{ ip: '203.0.113.7' }];
    assert.deepEqual(itemsOf('blacklist', { entries, other: [{ ip: 'x' }] }), entries);
    assert.deepEqual(itemsOf('attacks', { attacks: [], active: 0, total: 0 }), []);
    assert.deepEqual(itemsOf('block-pattern', { patterns: [{ name: 'ssh' }] }), [{ name: 'ssh' }]);
    assert.deepEqual(itemsOf('schedule', { schedule: [{ task: 'feeds' }] }), [{ task: 'feeds' }]);
    // listOf() accepted a bare array or any `items`/`data` array; a wrong shape is now an error.
    assert.throws(() => itemsOf('schedule', { tasks: [{ task: 'feeds' }] }), /no schedule list/);
    assert.throws(() => itemsOf('whitelist', [{ ip: '203.0.113.7' }]), /no entries list/);
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
