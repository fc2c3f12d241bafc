import { z } from 'zod';
import { v1Responses } from './v1.js';

const errorBody = z.object({ error: z.string() });

function schema(s: z.ZodType) {
  const { $schema: _drop, ...rest } = z.toJSONSchema(s, { target: 'draft-2020-12' }) as Record<string, unknown>;
  return rest;
}

const json = (ref: string) => ({ 'application/json': { schema: { $ref: `#/components/schemas/${ref}` } } });

function errors(...statuses: number[]) {
  const text: Record<number, string> = {
    401: 'token missing, revoked, or of a disabled account',
    404: 'unknown id, or a server of another account (existence is not confirmed)',
    429: 'more than 120 requests in a minute for this token; Retry-After says how many seconds to wait',
  };
  return Object.fromEntries(
    statuses.map((s) => [
      String(s),
      {
        description: text[s],
        content: json('Error'),
        ...(s === 429
          ? { headers: { 'Retry-After': { schema: { type: 'integer' }, description: 'seconds to wait' } } }
          : {}),
      },
    ]),
  );
}

const idParam = {
  name: 'id',
  in: 'path',
  required: true,
  description: 'the integer server id',
  schema: { type: 'string', pattern: '^[1-9][0-9]*$' },
};

/** The OpenAPI 3.1 description of the v1 API, built from the same zod schemas the console serializes with. */
export function v1OpenApi(serverUrl?: string): Record<string, unknown> {
  const operation = (summary: string, ref: string, params: unknown[] = [], extra: number[] = []) => ({
    summary,
    security: [{ token: [] }],
    parameters: params,
    responses: { '200': { description: 'success', content: json(ref) }, ...errors(401, 429, ...extra) },
  });
  return {
    openapi: '3.1.0',
    info: {
      title: 'Palisade console v1 API',
      version: '1',
      description:
        'Read-only. Authenticate with a personal access token (`Authorization: Bearer svc_…`). Every answer carries `Cache-Control: no-store`; timestamps are epoch milliseconds.',
    },
    ...(serverUrl ? { servers: [{ url: serverUrl }] } : {}),
    components: {
      securitySchemes: { token: { type: 'http', scheme: 'bearer', description: 'personal access token svc_…' } },
      schemas: {
        Me: schema(v1Responses.me),
        ServerList: schema(v1Responses.servers),
        Server: schema(v1Responses.server),
        BenchmarkList: schema(v1Responses.benchmarks),
        Error: schema(errorBody),
      },
    },
    paths: {
      '/api/v1/me': { get: operation('The account of the token', 'Me') },
      '/api/v1/servers': { get: operation('The servers the account sees', 'ServerList') },
      '/api/v1/servers/{id}': {
        get: operation('One server with its score components and latest sample', 'Server', [idParam], [404]),
      },
      '/api/v1/servers/{id}/benchmarks': {
        get: operation("A server's finished benchmark runs, newest first", 'BenchmarkList', [idParam], [404]),
      },
    },
  };
}
