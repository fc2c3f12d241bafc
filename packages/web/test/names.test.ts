import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compareNames } from '../src/lib/names';

test('names sort with their numbers by value, as every list of servers shows them', () => {
  const names = ['web-10', 'db-1', 'web-2', 'Web-3', 'web-1'];
  assert.deepEqual([...names].sort(compareNames), ['db-1', 'web-1', 'web-2', 'Web-3', 'web-10']);
  assert.equal(compareNames('worker-0009', 'worker-0010') < 0, true);
  assert.equal(compareNames('a', 'a'), 0);
});
