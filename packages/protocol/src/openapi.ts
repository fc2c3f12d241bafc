import { z } from 'zod';
import { CONTROL_PATHS } from './control.js';
import { controlOperation } from './control-schemas.js';
import { type DashboardResponseName, dashboardResponses } from './dashboard.js';
import { dashboardRequestBodies, dashboardRoutes, type RouteAuth } from './dashboard-routes.js';
import { controlSchemas } from './openapi-control.js';
import { openApiDocument } from './openapi-document.js';
import { type RequestBodyName, requestBodies } from './requests/index.js';
import { v1Responses } from './v1.js';

const errorBody = z.object({ error: z.string() });

/** The JSON Schema of an answer (`output`) or of a request body as sent (`input`: defaults optional, before transforms). */
function schema(s: z.ZodType, io: 'input' | 'output' = 'output') {
  const { $schema: _drop, ...rest } = z.toJSONSchema(s, { target: 'draft-2020-12', io }) as Record<string, unknown>;
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
  return openApiDocument({
    title: 'Palisade console v1 API',
    description:
      'Read-only. Authenticate with a personal access token (`Authorization: Bearer svc_…`). Every answer carries `Cache-Control: no-store`; timestamps are epoch milliseconds.',
    serverUrl,
    securitySchemes: { token: { type: 'http', scheme: 'bearer', description: 'personal access token svc_…' } },
    schemas: {
      Me: schema(v1Responses.me),
      ServerList: schema(v1Responses.servers),
      Server: schema(v1Responses.server),
      BenchmarkList: schema(v1Responses.benchmarks),
      Error: schema(errorBody),
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
  });
}

// ---- the whole console: v1 plus the dashboard routes ----

const SECURITY: Record<RouteAuth, Record<string, string[]>[]> = {
  public: [],
  session: [{ session: [] }],
  admin: [{ session: [] }],
  sessionOrSigned: [{ session: [] }, { svc1: [] }],
  any: [{ session: [] }, { svc1: [] }, { token: [] }],
  daemon: [{ daemon: [] }],
};

const ERROR_TEXT: Record<number, string> = {
  400: 'invalid input; `error` names the field',
  401: 'not signed in, or a refused SVC1 signature (`code` signature_refused, `reason` says why)',
  403: 'the member lacks a permission in the team (`code` permission_required, `permission` names it) or is not an admin',
  404: 'unknown id, or one of another team (existence is not confirmed)',
  409: 'conflicts with the current state; `error` says which',
  410: 'an invitation link that was used, revoked or has expired; `error` says which',
  429: 'too many attempts; Retry-After says how many seconds to wait',
  502: 'the agent failed or could not be reached; `error` says how',
};

/** The part of the document the control proxy adds: its paths and the component schemas they refer to. */
export interface ControlSection {
  paths: Record<string, Record<string, unknown>>;
  schemas: Record<string, Record<string, unknown>>;
}

/**
 * `GET|POST|DELETE /api/servers/{id}/control?path=…`: the agent's answer for one of the 20 control
 * paths, passed through. The bodies and answers are the control schemas
 * (packages/protocol/src/control-schemas.ts, the same document the agent's own API has:
 * `agentControlOpenApi`); a method's answer is one of that method's answers, the `path` parameter
 * says which.
 */
export function controlProxySection(): ControlSection {
  const control = controlSchemas();
  const named = (suffix: string) =>
    Object.keys(control)
      .filter((n) => n.endsWith(suffix))
      .map((n) => ({ $ref: `#/components/schemas/${n}` }));
  const operation = (method: 'GET' | 'POST' | 'DELETE') => {
    const part = `${method[0]}${method.slice(1).toLowerCase()}`;
    const bodies = named(`${part}Body`);
    return {
      summary: `${method} one of the agent's control paths through the console`,
      description:
        "The body and the answer are those of the agent's control API for `path` (docs/protection.md, `agentControlOpenApi`).",
      security: SECURITY.session,
      parameters: [
        idParam,
        {
          name: 'path',
          in: 'query',
          required: true,
          description: 'the control path',
          schema: { type: 'string', enum: [...CONTROL_PATHS] },
        },
        // The parameters the contract gives some path with this method; the proxy forwards those and refuses others.
        ...[...new Set(CONTROL_PATHS.flatMap((p) => controlOperation(p, method)?.query ?? []))].map((q) => ({
          name: q,
          in: 'query',
          required: false,
          description: `forwarded to the agent for the paths whose ${method} takes \`${q}\` (docs/protection.md); any other parameter is a 400`,
          schema: { type: 'string' },
        })),
      ],
      ...(bodies.length > 0
        ? { requestBody: { required: false, content: { 'application/json': { schema: { anyOf: bodies } } } } }
        : {}),
      responses: {
        '200': {
          description: "the agent's JSON answer: the answer of `path` for this method",
          content: { 'application/json': { schema: { anyOf: named(`${part}Answer`) } } },
        },
        ...dashboardErrors([401, 403, 502]),
        // The agent's own refusals of a body or path come back with its status and JSON.
        ...Object.fromEntries(
          [400, 404, 405, 409, 413].map((s) => [
            String(s),
            {
              description: `${ERROR_TEXT[s] ?? 'refused by the agent'}; or the agent's own answer`,
              content: json('ControlFailure'),
            },
          ]),
        ),
      },
    };
  };
  return {
    paths: {
      '/api/servers/{id}/control': { get: operation('GET'), post: operation('POST'), delete: operation('DELETE') },
    },
    schemas: {
      ...control,
      ControlFailure: {
        anyOf: [{ $ref: '#/components/schemas/DashboardError' }, { $ref: '#/components/schemas/ControlError' }],
      },
    },
  };
}

function dashboardErrors(statuses: number[]) {
  return {
    ...Object.fromEntries(
      statuses.map((s) => [
        String(s),
        {
          description: ERROR_TEXT[s] ?? 'failure',
          content: json('DashboardError'),
          ...(s === 429
            ? { headers: { 'Retry-After': { schema: { type: 'integer' }, description: 'seconds to wait' } } }
            : {}),
        },
      ]),
    ),
    default: {
      description: 'any other failure (refused host, cross-site write, body too large, …)',
      content: json('DashboardError'),
    },
  };
}

const pascal = (name: string) => name[0]!.toUpperCase() + name.slice(1);

/**
 * The OpenAPI 3.1 description of every JSON route of the console: the v1 API as `v1OpenApi` gives
 * it (plus a `default` failure), the dashboard routes of `dashboardRoutes`, and the control proxy
 * (`control`, by default `controlProxySection()`). Generated from the same zod schemas the web's types come from.
 */
export function consoleOpenApi(
  options: { serverUrl?: string; control?: ControlSection } = {},
): Record<string, unknown> {
  const v1 = v1OpenApi(options.serverUrl) as {
    components: { securitySchemes: Record<string, unknown>; schemas: Record<string, unknown> };
    paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
  };
  const control = options.control ?? controlProxySection();
  const paths: Record<string, Record<string, unknown>> = {};
  for (const [path, item] of Object.entries(v1.paths)) {
    paths[path] = Object.fromEntries(
      Object.entries(item).map(([method, op]) => [
        method,
        {
          ...op,
          responses: { ...op.responses, default: { description: 'any other failure', content: json('Error') } },
        },
      ]),
    );
  }
  const used = new Set<DashboardResponseName>(['error']);
  const bodies = new Set<RequestBodyName>();
  for (const route of dashboardRoutes) {
    used.add(route.answer);
    const body = dashboardRequestBodies[`${route.method} ${route.path}`];
    if (body) bodies.add(body);
    const params = [
      ...(route.path.includes('{id}') ? [{ ...idParam, description: 'the integer id' }] : []),
      ...Object.entries(route.query ?? {}).map(([name, q]) => ({
        name,
        in: 'query',
        required: q.required ?? false,
        description: q.description,
        schema: q.schema,
      })),
    ];
    const plainLimit =
      route.errors.includes(429) && (route.path === '/api/auth/login' || route.path === '/api/auth/register');
    paths[route.path] ??= {};
    paths[route.path]![route.method] = {
      summary: route.summary,
      security: SECURITY[route.auth],
      ...(route.auth === 'admin' ? { description: 'Admin accounts only.' } : {}),
      parameters: params,
      // A deletion's proof (password or code) may be left out when neither is asked for.
      ...(body ? { requestBody: { required: route.method !== 'delete', content: json(`${body}Request`) } } : {}),
      responses: {
        [String(route.status)]: { description: 'success', content: json(`Dashboard${pascal(route.answer)}`) },
        ...dashboardErrors(route.errors),
        // The sign-in limits keep their `{"error"}` body (docs/api.md, "Errors").
        ...(plainLimit ? { '429': { description: ERROR_TEXT[429], content: json('Error') } } : {}),
      },
    };
  }
  for (const [path, item] of Object.entries(control.paths)) paths[path] = { ...paths[path], ...item };
  const dashboardSchemas = Object.fromEntries(
    [...used].map((name) => [`Dashboard${pascal(name)}`, schema(dashboardResponses[name])]),
  );
  const requestSchemas = Object.fromEntries(
    [...bodies].map((name) => [`${name}Request`, schema(requestBodies[name], 'input')]),
  );
  return openApiDocument({
    title: 'Palisade console API',
    description:
      'The v1 API (personal tokens) and the routes the dashboard calls (session cookie; some also take SVC1-signed requests). Timestamps are epoch milliseconds; dashboard failures are `{error, code}` (packages/protocol/src/envelope.ts).',
    serverUrl: options.serverUrl,
    securitySchemes: {
      ...v1.components.securitySchemes,
      session: { type: 'apiKey', in: 'cookie', name: 'pl_session', description: 'set by /api/auth/login' },
      daemon: { type: 'http', scheme: 'bearer', description: "an agent's daemon token dmn_… (its check-in token)" },
      svc1: {
        type: 'apiKey',
        in: 'header',
        name: 'X-SVC-Key',
        description: 'an SVC1-signed request (docs/signing.md)',
      },
    },
    schemas: { ...v1.components.schemas, ...dashboardSchemas, ...requestSchemas, ...control.schemas },
    paths,
  });
}
