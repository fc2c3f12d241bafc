// The control API: the 20 paths the console's control proxy forwards (docs/protection.md, "Control API").
// A table from path and method to a handler; each body is checked with the path's schema from
// packages/protocol/src/control-schemas.ts before a handler sees it. GET reads, POST changes, DELETE
// removes; every answer is JSON, every bad input a 400 naming the field.

import { isControlPath } from '@palisade/protocol/control';
import {
  CONTROL_OPERATIONS,
  type ControlInput,
  type ControlOperations,
  checkControl,
  controlOperation,
} from '@palisade/protocol/control-schemas/standalone';
import type { ConfigAccess } from '../config/protection-file.js';
import { InputError } from '../lib/net.js';
import { Conflict, type ListName, NotFound, type ProtectionEngine } from '../protection/engine.js';

export { CONTROL_PATHS } from '@palisade/protocol/control';

export interface ControlRequest {
  method: string;
  /** Without the leading slash, e.g. `whitelist/import`. */
  path: string;
  query: URLSearchParams;
  /** The body: parsed JSON, or the raw text when it is not JSON (imports take one entry per line). */
  body: () => Promise<unknown>;
  /** The client's address, so a config change cannot lock that client out. */
  client: string | undefined;
}

export interface ControlAnswer {
  status: number;
  body: unknown;
}

type Handlers = {
  [P in keyof ControlOperations]: {
    [M in keyof ControlOperations[P]]: (input: ControlInput<P, M>, client: string | undefined) => unknown;
  };
};

/** What each path and method does; the table's shape follows CONTROL_OPERATIONS, so none is missing. */
function handlers(engine: ProtectionEngine, config: ConfigAccess): Handlers {
  const list = (name: ListName) => ({
    GET: () => engine.listEntries(name),
    POST: (body: ControlInput<'whitelist', 'POST'>) =>
      Array.isArray(body) || typeof body === 'string' ? engine.importEntries(name, body) : engine.addEntry(name, body),
    DELETE: (body: ControlInput<'whitelist', 'DELETE'>) => engine.removeEntry(name, body.ip),
  });
  const clear = (name: ListName) => ({
    POST: (body: ControlInput<'whitelist/clear', 'POST'>) => engine.clearList(name, body.source),
  });
  const geo = () => engine.geoMode();
  const feeds = () => engine.autofetchState();
  const job = () => engine.blacklistStatus();
  return {
    config: { GET: () => config.read(), POST: (body, client) => config.change(body, client) },
    whitelist: list('whitelist'),
    'whitelist/clear': clear('whitelist'),
    'whitelist/import': { POST: (body) => engine.importEntries('whitelist', body) },
    blacklist: { ...list('blacklist'), GET: (query) => engine.readBlacklist(query) },
    'blacklist/clear': clear('blacklist'),
    'geo/mode': { GET: geo, POST: (body) => engine.setGeo(body) },
    'geo/toggle': { GET: geo, POST: (body) => engine.toggleCountry(body.country) },
    'baseline/export': { GET: () => engine.baselineExport() },
    'baseline/import': { POST: (body) => engine.baselineImport(body) },
    'baseline/delete': { POST: () => engine.baselineDelete(), DELETE: () => engine.baselineDelete() },
    'autofetch/toggle': { GET: feeds, POST: (body) => engine.toggleAutofetch(body) },
    'autofetch/never-add': list('never-add'),
    'autofetch/never-remove': list('never-remove'),
    'autofetch/fetch-now': { GET: feeds, POST: (body) => engine.fetchFeeds(body.feed) },
    schedule: {
      GET: () => engine.scheduleList(),
      POST: (body) => engine.setSchedule(body),
      DELETE: (body) => engine.setSchedule({ task: body.task, cron: null }),
    },
    'block-pattern': {
      GET: () => engine.patternList(),
      POST: (body) => engine.addPattern(body),
      DELETE: (body) => engine.removePattern(body.name),
    },
    attacks: { GET: () => engine.attackList() },
    'attacks/blacklist': { GET: job, POST: (body) => engine.blacklistAttack(body.attack_id) },
    'attacks/blacklist/status': { GET: job },
  };
}

/**
 * The body a handler checks: the query parameters the path reads in place of body fields
 * (`DELETE whitelist?ip=…`) when any is given, otherwise the request body (an empty one counts as
 * `{}`). A GET reads its query parameters only (`GET blacklist?ip=…`). A parameter given twice is
 * refused rather than one of them picked.
 */
async function input(r: ControlRequest, query: readonly string[] = []): Promise<unknown> {
  const given = query.filter((q) => r.query.has(q));
  const twice = given.find((q) => r.query.getAll(q).length > 1);
  if (twice) throw new InputError(`${twice}: given more than once; give it once`);
  if (r.method === 'GET') return Object.fromEntries(given.map((q) => [q, r.query.get(q)]));
  if (given.length > 0) return Object.fromEntries(given.map((q) => [q, r.query.get(q)]));
  return (await r.body()) ?? {};
}

/** Routes one control request; null when the path is not a control path. */
export function createControlRoutes(engine: ProtectionEngine, config: ConfigAccess) {
  const table = handlers(engine, config) as unknown as Record<
    string,
    Record<string, (input: unknown, client: string | undefined) => unknown>
  >;

  async function route(r: ControlRequest & { path: keyof ControlOperations }): Promise<unknown> {
    const op = controlOperation(r.path, r.method);
    const handler = table[r.path]?.[r.method];
    if (!op || !handler) {
      const allowed = Object.keys(CONTROL_OPERATIONS[r.path]).join(', ');
      throw new MethodNotAllowed(`method ${r.method} not allowed on /${r.path} (use ${allowed})`);
    }
    if (!op.body) return handler(undefined, r.client);
    const checked = checkControl(op.body, await input(r, op.query));
    if (!checked.ok) throw new InputError(checked.problem);
    return handler(checked.value, r.client);
  }

  return async (r: ControlRequest): Promise<ControlAnswer | null> => {
    if (!isControlPath(r.path)) return null;
    try {
      return { status: 200, body: await route({ ...r, path: r.path }) };
    } catch (err) {
      if (err instanceof InputError) return { status: 400, body: { error: err.message } };
      if (err instanceof NotFound) return { status: 404, body: { error: err.message } };
      if (err instanceof Conflict) return { status: 409, body: { error: err.message } };
      if (err instanceof MethodNotAllowed) return { status: 405, body: { error: err.message } };
      throw err;
    }
  };
}

class MethodNotAllowed extends Error {}

/** Parses a control request body: JSON when it is JSON, otherwise the text; undefined when empty. */
export function parseControlBody(text: string): unknown {
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
