// Holds the answers of a real daemon to the control contract (packages/protocol/src/control-schemas.ts
// and the OpenAPI document made from it); the control API suites check every answer they see with it.
import assert from 'node:assert/strict';
import { isControlPath } from '@palisade/protocol/control';
import { answerSchema, checkControl, controlOperation } from '@palisade/protocol/control-schemas';
import { agentControlOpenApi } from '@palisade/protocol/openapi-control';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { type AgentProcess, type Answer, request } from './agent-process.js';

// biome-ignore lint/suspicious/noExplicitAny: the test walks the document's JSON by hand
const openapi = agentControlOpenApi() as any;
const ajv = new Ajv2020({ strict: false, allErrors: true });
ajv.addSchema({ $id: 'agent-control', components: openapi.components });

/**
 * A 200 is what the path's schema describes for the query given (`GET blacklist?ip=` answers a
 * lookup), anything else is `{error}` naming the problem.
 */
export function assertAnswerMatches(method: string, pathAndQuery: string, status: number, body: unknown) {
  const [path = '', query = ''] = pathAndQuery.split('?');
  if (!isControlPath(path)) return;
  if (status !== 200) {
    assert.equal(typeof (body as { error?: unknown })?.error, 'string', `${method} ${path} ${status}: no error text`);
    return;
  }
  const op = controlOperation(path, method);
  assert.ok(op, `${method} ${path} answered 200 but is not in the contract`);
  const params = new URLSearchParams(query);
  const checked = checkControl(
    answerSchema(op, (p) => params.has(p)),
    body,
  );
  assert.ok(
    checked.ok,
    `${method} ${pathAndQuery}: the answer does not match its schema: ${checked.ok ? '' : checked.problem}`,
  );
  // The published document says the same: its JSON Schema, made from the zod schema, accepts it too.
  const ref = (
    openapi.paths[`/${path}`][method.toLowerCase()].responses['200'].content['application/json'].schema.$ref as string
  ).replace('#/', 'agent-control#/');
  const validate = ajv.getSchema(ref) ?? ajv.compile({ $ref: ref });
  assert.ok(
    validate(body),
    `${method} ${path}: not what the OpenAPI document says: ${ajv.errorsText(validate.errors)}`,
  );
}

/**
 * A control call to a test agent (`agent()` is read at each call: suites start theirs in `before`),
 * its answer held to the contract. A body is sent with its length (Node sends a DELETE body
 * without one unless told); a string is sent as it is (imports take text).
 */
export function controlCaller(agent: () => AgentProcess) {
  return async (method: string, path: string, body?: unknown): Promise<Answer> => {
    const text = body === undefined ? '' : typeof body === 'string' ? body : JSON.stringify(body);
    const r = await request(`${agent().url}/${path}`, {
      key: agent().key,
      method,
      headers: body === undefined ? {} : { 'content-length': String(Buffer.byteLength(text)) },
      ...(body === undefined ? {} : { body }),
    });
    if (process.env.DEBUG_API) console.error(method, path, r.status, r.body.slice(0, 200));
    assertAnswerMatches(method, path, r.status, r.json);
    return r;
  };
}
