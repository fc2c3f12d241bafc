import * as z from 'zod/mini';
import { CONTROL_PATHS, type ControlPath } from './control.js';
import { CONTROL_OPERATIONS, type ControlMethod, type ControlOperation } from './control-schemas.js';
import { openApiDocument } from './openapi-document.js';

/**
 * The agent's control API as OpenAPI 3.1, made from the same schemas the agent checks bodies with
 * (packages/protocol/src/control-schemas.ts). The console's control proxy forwards exactly these
 * paths and answers, so its document refers here for the bodies and answers.
 */

function jsonSchema(s: z.ZodMiniType): Record<string, unknown> {
  const { $schema: _drop, ...rest } = z.toJSONSchema(s, { target: 'draft-2020-12', io: 'output' }) as Record<
    string,
    unknown
  >;
  return rest;
}

const errorBody = {
  type: 'object',
  properties: { error: { type: 'string', description: 'the field, then what was expected' } },
  required: ['error'],
};

/** What each query parameter of a GET means (a GET reads no body: its parameters are its input). */
const READ_PARAMS: Record<string, string> = {
  ip: 'one IP address: the answer lists every source holding it (a lookup) instead of the entries',
  source: "`feed:<name>`: the answer is one page of that feed's entries, in address order",
  cursor: "with `source`: the previous page's `next_cursor`",
  limit: 'with `source`: entries per page, 1 to 1000 (default 100)',
};

const name = (path: string, method: string, part: 'Body' | 'Answer') =>
  `${path
    .split(/[/-]/)
    .map((w) => w[0]!.toUpperCase() + w.slice(1))
    .join('')}${method[0]}${method.slice(1).toLowerCase()}${part}`;

/** Every control path and method with its body and answer schema names (for a `components.schemas` section). */
export function controlSchemas(): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = { ControlError: errorBody };
  for (const path of CONTROL_PATHS)
    for (const [method, op] of Object.entries(CONTROL_OPERATIONS[path]) as [ControlMethod, ControlOperation][]) {
      if (op.body && method !== 'GET') out[name(path, method, 'Body')] = jsonSchema(op.body);
      const answers = Object.values(op.answers ?? {});
      out[name(path, method, 'Answer')] = jsonSchema(answers.length > 0 ? z.union([op.answer, ...answers]) : op.answer);
    }
  return out;
}

/** The OpenAPI operation of one path and method; `ref` turns a schema name into a `$ref`. */
export function controlOperationDoc(path: ControlPath, method: ControlMethod, ref: (schema: string) => string) {
  const op = (CONTROL_OPERATIONS[path] as Partial<Record<ControlMethod, ControlOperation>>)[method]!;
  const json = (schema: string) => ({ 'application/json': { schema: { $ref: ref(schema) } } });
  return {
    summary: op.summary,
    ...(op.query
      ? {
          parameters: op.query.map((q) => ({
            name: q,
            in: 'query',
            required: false,
            description: method === 'GET' ? (READ_PARAMS[q] ?? q) : `stands in for the body's \`${q}\``,
            schema: { type: 'string' },
          })),
        }
      : {}),
    ...(op.body && method !== 'GET'
      ? { requestBody: { required: false, content: json(name(path, method, 'Body')) } }
      : {}),
    responses: {
      '200': { description: 'done', content: json(name(path, method, 'Answer')) },
      '400': {
        description: 'a body or parameter that does not fit; `error` names the field',
        content: json('ControlError'),
      },
      '404': { description: 'no such entry or pattern', content: json('ControlError') },
      '405': { description: 'a method this path does not have', content: json('ControlError') },
      '409': { description: 'a job is still running', content: json('ControlError') },
    },
  };
}

/** The agent's control API: the 20 paths on the agent's listener, behind its key. */
export function agentControlOpenApi(serverUrl?: string): Record<string, unknown> {
  const ref = (schema: string) => `#/components/schemas/${schema}`;
  const paths: Record<string, Record<string, unknown>> = {};
  for (const path of CONTROL_PATHS) {
    const item: Record<string, unknown> = {};
    for (const method of Object.keys(CONTROL_OPERATIONS[path]) as ControlMethod[])
      item[method.toLowerCase()] = { ...controlOperationDoc(path, method, ref), security: [{ agentKey: [] }] };
    paths[`/${path}`] = item;
  }
  return openApiDocument({
    title: 'Palisade agent control API',
    description:
      "Protection settings of one agent (docs/protection.md). The console's control proxy (`/api/servers/{id}/control?path=…`) forwards these paths with these bodies and answers.",
    serverUrl,
    securitySchemes: { agentKey: { type: 'http', scheme: 'bearer', description: 'the agent key agk_…' } },
    schemas: controlSchemas(),
    paths,
  });
}
