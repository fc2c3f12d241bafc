import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import Fastify from 'fastify';
import { consoleDocument, isDocumented, openApiMismatch, openApiPath } from './openapi-check.js';
import { dialects, holdAnswersToOpenApi, registerUser, type TestApp, testApp } from './support.js';

/**
 * Routes that are not in the OpenAPI document, and why. Everything else the console registers must
 * be described there (packages/protocol/src/openapi.ts).
 */
const NOT_DOCUMENTED: Record<string, string> = {
  // The agent's own calls (daemon token dmn_…, run token bmt_…): their bodies are the check-in and
  // benchmark contracts of packages/protocol/src/checkin.ts and benchmark.ts (docs/fleet.md, docs/benchmarks.md).
  'POST /api/agent/checkin': 'agent check-in',
  'POST /api/agent/benchmarks/:run/start': 'agent benchmark report',
  'POST /api/agent/benchmarks/:run/log': 'agent benchmark report',
  'POST /api/agent/benchmarks/:run/result': 'agent benchmark report',
  'GET /api/agent/benchmarks/:run/payload': 'network benchmark payload (octet-stream)',
  'POST /api/agent/benchmarks/:run/payload': 'network benchmark payload (octet-stream)',
  'GET /api/agent/benchmarks/:run/ping': 'network benchmark round trip',
  // An agent registering itself with an enrolment token (enr_…): its body and answer are
  // AgentRegistration and AgentRegistered of packages/protocol/src/enrolment.ts (docs/api.md).
  'POST /api/agent/register': 'agent registration',
  // The outbound link is a WebSocket (packages/protocol/src/link.ts); a plain GET is only its 400.
  'GET /api/agent/link': 'outbound link WebSocket upgrade (a GET without Upgrade is 400)',
  // The one-line install: a shell script and the agent's packages, not JSON (docs/agent.md).
  'GET /install/agent.sh': 'install script (text/x-shellscript)',
  'GET /install/SHA256SUMS': 'checksums of the agent packages (text)',
  'GET /install/SHA256SUMS.sig': 'the release key signature of SHA256SUMS (octet-stream, 64 bytes)',
  'GET /install/:artifact': 'an agent package (octet-stream), by an allow-list of names',
  // The recipient's confirmation of an e-mail alert channel: an HTML page and its form (docs/alerts.md).
  'GET /alerts/confirm': 'e-mail channel confirmation page (HTML)',
  'POST /alerts/confirm': 'e-mail channel confirmation form (HTML)',
  // Single sign-on's browser redirects (docs/teams.md, "Single sign-on"): 302 to the provider and back.
  'GET /api/auth/oidc/start': 'redirect to the OpenID provider',
  'GET /api/auth/oidc/callback': 'redirect back from the OpenID provider, then to the dashboard',
  // Load-balancer probes, outside /api (docs/deploy.md, "Health and readiness").
  'GET /healthz': 'liveness probe',
  'GET /readyz': 'readiness probe',
  // The document itself.
  'GET /api/v1/openapi.json': 'the v1 OpenAPI document',
  // The dashboard's static files (packages/web/dist): HTML, scripts, styles.
  'GET /': 'redirect to /dashboard',
  'GET /dashboard': 'dashboard page',
  'GET /dashboard/*': 'dashboard page',
  'GET /assets/*': 'dashboard build assets',
};

// Fastify adds a HEAD route beside every GET; it answers the same headers and no body.
const registered = (t: TestApp) =>
  t.app.routeList.filter((r) => r.method !== 'HEAD').map((r) => ({ key: `${r.method} ${r.url}`, ...r }));

for (const dialect of dialects()) {
  describe(`the OpenAPI document covers every route (${dialect})`, () => {
    let t: TestApp;
    before(async () => {
      t = await testApp(dialect);
      await t.app.ready();
    });
    after(() => t.close());

    test('every registered route is documented or on the explained allow-list', () => {
      const missing = registered(t)
        .filter((r) => !isDocumented(openApiPath(r.url), r.method) && NOT_DOCUMENTED[r.key] === undefined)
        .map((r) => r.key);
      assert.deepEqual(missing, [], 'routes neither in the OpenAPI document nor on the allow-list');
    });

    test('the allow-list and the document name only routes that exist', () => {
      const keys = new Set(registered(t).map((r) => r.key));
      assert.deepEqual(
        Object.keys(NOT_DOCUMENTED).filter((k) => !keys.has(k)),
        [],
        'allow-listed routes that are gone',
      );
      const served = new Set(registered(t).map((r) => `${r.method} ${openApiPath(r.url)}`));
      const documented = Object.entries(consoleDocument.paths).flatMap(([path, item]) =>
        Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`),
      );
      assert.deepEqual(
        documented.filter((d) => !served.has(d)),
        [],
        'documented operations no route serves',
      );
    });

    test('every write that can answer 400 documents its body, from the request schemas', async () => {
      // Writes whose input is the path or the query string, not a body.
      const noBody = new Set(['DELETE /api/account/sessions/{id}', 'DELETE /api/fleet/addresses']);
      const missing = Object.entries(consoleDocument.paths).flatMap(([path, item]) =>
        Object.entries(item as Record<string, { requestBody?: unknown; responses: object }>)
          .filter(([method, op]) => method !== 'get' && '400' in op.responses && op.requestBody === undefined)
          .map(([method]) => `${method.toUpperCase()} ${path}`)
          .filter((key) => !noBody.has(key)),
      );
      assert.deepEqual(missing, [], 'writes without a documented request body');
      // The document's schema takes what the console takes, and refuses a wrongly typed field.
      const user = await registerUser(t.app);
      const body = { name: 'ci' };
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/tokens',
        headers: { cookie: user.cookie, 'content-type': 'application/json' },
        payload: JSON.stringify(body),
      });
      assert.equal(res.statusCode, 201);
      const ajv = new Ajv2020({ strict: false });
      const schema = (consoleDocument.components.schemas as Record<string, object>).CreateTokenRequest!;
      assert.equal(ajv.validate(schema, body), true);
      assert.equal(ajv.validate(schema, { name: 7 }), false);
    });

    test('a real answer matches, and the same answer with a field changed, added or dropped does not', async () => {
      const user = await registerUser(t.app);
      const res = await t.app.inject({ method: 'GET', url: '/api/account/me', headers: { cookie: user.cookie } });
      assert.equal(res.statusCode, 200);
      const body = res.json();
      assert.equal(openApiMismatch('/api/account/me', 'GET', 200, body), null);
      const broken = [
        { data: { ...body.data, created_at: String(body.data.created_at) } },
        { data: { ...body.data, extra: 1 } },
        { data: { ...body.data, permissions: undefined } },
        { data: { ...body.data, permissions: ['control.everything'] } },
      ];
      for (const wrong of broken) assert.notEqual(openApiMismatch('/api/account/me', 'GET', 200, wrong), null);
      assert.match(openApiMismatch('/api/account/me', 'GET', 201, body) ?? '', /documents no 201/);
      assert.equal(openApiMismatch('/api/account/me', 'GET', 418, { error: 'x', code: 'invalid_input' }), null);
      assert.equal(
        openApiMismatch('/api/account/me', 'GET', 401, { error: 'sign in first', code: 'unauthenticated' }),
        null,
      );
      assert.notEqual(openApiMismatch('/api/account/me', 'GET', 401, { error: 'sign in first' }), null);
    });
  });
}

describe('a route that answers what its schema does not describe fails the test', () => {
  test('the answer becomes a 500 naming the mismatch, and is listed', async () => {
    const app = Fastify();
    const mismatches = holdAnswersToOpenApi(app);
    // A documented route answering a field the document does not have.
    app.get('/api/catalog', async () => ({ data: { items: [], page: 1 } }));
    app.get('/api/auth/session', async () => ({ data: { account: null } }));
    const wrong = await app.inject({ method: 'GET', url: '/api/catalog' });
    assert.equal(wrong.statusCode, 500);
    assert.match(mismatches[0] ?? '', /200 GET \/api\/catalog does not match the OpenAPI document/);
    const right = await app.inject({ method: 'GET', url: '/api/auth/session' });
    assert.equal(right.statusCode, 200);
    assert.equal(mismatches.length, 1);
    await app.close();
  });
});
