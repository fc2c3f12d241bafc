import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import {
  ApiError,
  errorFromAnswer,
  errorText,
  fieldError,
  isPermissionError,
  otherError,
  PERMISSION_REQUIRED,
  proxyRequest,
  request,
  setRequestTeam,
  setTwoFactorRequiredHandler,
  setUnauthorizedHandler,
} from '../src/lib/api';

describe('lib/api: a message about a field goes under that field, in words', () => {
  test('fieldError and otherError', () => {
    const m = "old_password: not the account's current password";
    assert.equal(fieldError(m, 'old_password'), "Not the account's current password.");
    assert.equal(fieldError(m, 'new_password'), undefined);
    assert.equal(otherError(m, ['old_password', 'new_password']), null);
    assert.equal(otherError(m, ['code']), m);
    assert.equal(
      fieldError('code: already used; wait for the next one', 'code'),
      'Already used; wait for the next one.',
    );
    assert.equal(fieldError('code: wrong code!', 'code'), 'Wrong code!');
    assert.equal(otherError(null, ['code']), null);
    assert.equal(fieldError(null, 'code'), undefined);
  });
});

describe('lib/api: one place turns an answer into an error', () => {
  test('status, the console sentence and an optional code', () => {
    const err = errorFromAnswer(400, { error: 'name: expected a string' }, null);
    assert.equal(err.status, 400);
    assert.equal(err.message, 'name: expected a string');
    assert.equal(err.code, undefined);
    const coded = errorFromAnswer(403, { error: 'whatever words', code: 'permission_required' }, null);
    assert.equal(coded.code, 'permission_required');
    assert.equal(errorFromAnswer(500, 'not json', null).message, 'The console answered HTTP 500.');
  });

  test('a 403 is a permission error by status, whatever its text says', () => {
    assert.equal(
      isPermissionError(errorFromAnswer(403, { error: 'this needs the control.read permission' }, null)),
      true,
    );
    assert.equal(isPermissionError(errorFromAnswer(403, { error: 'nope' }, null)), true, 'text is not looked at');
    assert.equal(isPermissionError(errorFromAnswer(403, { error: 'x', code: PERMISSION_REQUIRED }, null)), true);
    assert.equal(isPermissionError(errorFromAnswer(403, { error: 'x', code: 'agent_refused' }, null)), false);
    assert.equal(isPermissionError(errorFromAnswer(400, { error: 'missing permission' }, null)), false);
    assert.equal(isPermissionError(new Error('permission')), false);
  });

  test('429 reads Retry-After into plain words', () => {
    assert.equal(errorText(errorFromAnswer(429, { error: 'too many' }, '12')), 'Too many attempts. Try again in 12 s.');
    assert.equal(errorText(errorFromAnswer(429, { error: 'too many' }, 'soon')), 'Too many attempts. Try again later.');
  });
});

describe('lib/api over real HTTP', () => {
  let server: Server;
  const realFetch = globalThis.fetch;
  const seen: string[] = [];

  before(async () => {
    server = createServer((req, res) => {
      seen.push(`${req.method} ${req.url}`);
      const json = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      if (req.url === '/api/ok?a=1&b=two') return json(200, { data: { answer: 42 } });
      if (req.url === '/api/bare') return json(200, { answer: 42 });
      if (req.url === '/api/forbidden') return json(403, { error: 'this needs the control.edit permission' });
      if (req.url === '/api/servers')
        return json(403, { error: 'this team requires two-factor sign-in', code: 'two_factor_required' });
      if (req.url === '/api/account/me') return json(401, { error: 'sign in first' });
      return json(404, { error: 'not found' });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    // The dashboard calls relative URLs on its own origin; here that origin is the test server.
    globalThis.fetch = (input, init) => realFetch(`${base}${String(input)}`, init);
  });

  after(() => {
    globalThis.fetch = realFetch;
    server.close();
  });

  test('request() unwraps {data} and sends the query string', async () => {
    assert.deepEqual(await request('GET', '/api/ok', { query: { a: 1, b: 'two', c: undefined } }), { answer: 42 });
  });

  test('request() refuses an answer without the envelope; proxyRequest() passes it through', async () => {
    await assert.rejects(request('GET', '/api/bare'), (err: unknown) => err instanceof ApiError && err.status === 500);
    assert.deepEqual(await proxyRequest('GET', '/api/bare'), { answer: 42 });
  });

  test('an error answer becomes an ApiError; a 401 outside /api/auth/ calls the handler', async () => {
    await assert.rejects(request('POST', '/api/forbidden', { body: {} }), (err: unknown) => isPermissionError(err));
    let calls = 0;
    setUnauthorizedHandler(() => calls++);
    await assert.rejects(request('GET', '/api/account/me'), (err: unknown) => (err as ApiError).status === 401);
    setUnauthorizedHandler(null);
    assert.equal(calls, 1);
  });

  test('a 403 two_factor_required calls its handler once, with the team the call acted in; it is no permission error', async () => {
    const teams: (number | null)[] = [];
    setTwoFactorRequiredHandler((team) => teams.push(team));
    setRequestTeam(7);
    try {
      await assert.rejects(
        request('GET', '/api/servers'),
        (err: unknown) => err instanceof ApiError && err.code === 'two_factor_required' && !isPermissionError(err),
      );
      await assert.rejects(request('POST', '/api/forbidden', { body: {} }), (err: unknown) => isPermissionError(err));
    } finally {
      setTwoFactorRequiredHandler(null);
      setRequestTeam(null);
    }
    assert.deepEqual(teams, [7]);
    assert.ok(seen.includes('GET /api/servers'));
  });
});
