import assert from 'node:assert/strict';
import { v1OpenApi } from '@palisade/protocol';
import { Ajv2020 } from 'ajv/dist/2020.js';

type Doc = {
  paths: Record<
    string,
    { get: { responses: Record<string, { content: { 'application/json': { schema: { $ref: string } } } }> } }
  >;
  components: { schemas: Record<string, object> };
};

const doc = v1OpenApi() as unknown as Doc;
const ajv = new Ajv2020({ strict: false, allErrors: true });
ajv.addSchema({ $id: 'palisade', components: doc.components } as object);

const templates = Object.keys(doc.paths).map((template) => ({
  template,
  pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`),
}));

/** Fails unless `body` is what the published OpenAPI document promises for this path and status. */
export function assertMatchesOpenApi(url: string, status: number, body: unknown) {
  const path = url.split('?')[0]!;
  const found = templates.find((t) => t.pattern.test(path));
  assert.ok(found, `${path} is not in the OpenAPI document`);
  const response = doc.paths[found.template]!.get.responses[String(status)];
  assert.ok(response, `${found.template} documents no ${status} answer`);
  const ref = response.content['application/json'].schema.$ref.replace('#/', 'palisade#/');
  const validate = ajv.getSchema(ref) ?? ajv.compile({ $ref: ref });
  assert.ok(
    validate(body),
    `${status} ${path} does not match the OpenAPI document: ${ajv.errorsText(validate.errors)}`,
  );
}
