import assert from 'node:assert/strict';
import { consoleOpenApi } from '@palisade/protocol';
import { Ajv2020 } from 'ajv/dist/2020.js';

type Response = { content?: { 'application/json'?: { schema: { $ref?: string } & Record<string, unknown> } } };
type Doc = {
  paths: Record<string, Record<string, { responses: Record<string, Response> }>>;
  components: { schemas: Record<string, object> };
};

/** The whole console's document: v1, the dashboard routes and the control proxy (packages/protocol/src/openapi.ts). */
export const consoleDocument = consoleOpenApi() as unknown as Doc;
const ajv = new Ajv2020({ strict: false, allErrors: true });
ajv.addSchema({ $id: 'palisade', components: consoleDocument.components } as object);

const compiled = new Map<string, ReturnType<typeof ajv.compile>>();

const templates = Object.keys(consoleDocument.paths).map((template) => ({
  template,
  pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`),
}));

/** A Fastify route pattern (`/api/servers/:id`) in OpenAPI form (`/api/servers/{id}`). */
export const openApiPath = (route: string) => route.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

/** Whether the document describes this route (OpenAPI path form) and method. */
export function isDocumented(path: string, method: string): boolean {
  return consoleDocument.paths[path]?.[method.toLowerCase()] !== undefined;
}

/**
 * Why `body` is not what the document promises for this route, method and status, or null when it
 * is. A success status must be documented for the route; a failure may fall back to `default`.
 */
export function openApiMismatch(path: string, method: string, status: number, body: unknown): string | null {
  const operation = consoleDocument.paths[path]?.[method.toLowerCase()];
  if (!operation) return `${method} ${path} is not in the OpenAPI document`;
  const response = operation.responses[String(status)] ?? (status >= 400 ? operation.responses.default : undefined);
  if (!response) return `${method} ${path} documents no ${status} answer`;
  const schema = response.content?.['application/json']?.schema;
  if (!schema) return `${method} ${path} documents no JSON body for ${status}`;
  // A named schema, or one written in place (the control proxy's `anyOf` of the paths' answers).
  const text = JSON.stringify(schema).replaceAll('"#/components/', '"palisade#/components/');
  const validate = compiled.get(text) ?? compiled.set(text, ajv.compile(JSON.parse(text))).get(text)!;
  if (validate(body)) return null;
  return `${status} ${method} ${path} does not match the OpenAPI document (${schema.$ref ?? 'inline schema'}): ${ajv.errorsText(validate.errors, { dataVar: 'body' })}`;
}

/** Fails unless `body` is what the published OpenAPI document promises for this URL, method and status. */
export function assertMatchesOpenApi(url: string, status: number, body: unknown, method = 'GET') {
  const path = url.split('?')[0]!;
  const found =
    templates.find((t) => t.template === path) ??
    templates.find((t) => t.pattern.test(path) && isDocumented(t.template, method));
  assert.ok(found, `${path} is not in the OpenAPI document`);
  const mismatch = openApiMismatch(found.template, method, status, body);
  assert.equal(mismatch, null, mismatch ?? '');
}
