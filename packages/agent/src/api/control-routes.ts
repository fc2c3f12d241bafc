// The control API: the 20 paths the console's control proxy forwards (spec, proxy rule 2).
// GET reads, POST changes, DELETE removes; every answer is JSON, every bad input a 400 with the reason.

import { isControlPath } from '@palisade/protocol/control';
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

const LISTS: Record<string, ListName> = {
  whitelist: 'whitelist',
  blacklist: 'blacklist',
  'autofetch/never-add': 'never-add',
  'autofetch/never-remove': 'never-remove',
};

/** Routes one control request; null when the path is not a control path. */
export function createControlRoutes(engine: ProtectionEngine, config: ConfigAccess) {
  async function route(r: ControlRequest): Promise<unknown> {
    const { method, path } = r;
    const list = LISTS[path];
    if (list) {
      if (method === 'GET') return engine.listEntries(list);
      if (method === 'POST') return engine.addEntry(list, await r.body());
      if (method === 'DELETE') {
        const ip = r.query.get('ip') ?? ((await r.body()) as { ip?: unknown } | undefined)?.ip;
        return engine.removeEntry(list, ip);
      }
    }
    const key = `${method} ${path}`;
    switch (key) {
      case 'POST whitelist/clear':
      case 'POST blacklist/clear':
        return engine.clearList(
          path === 'whitelist/clear' ? 'whitelist' : 'blacklist',
          r.query.get('source') ?? undefined,
        );
      case 'POST whitelist/import':
        return engine.importEntries('whitelist', await r.body());
      case 'GET config':
        return config.read();
      case 'POST config':
        return config.change(await r.body(), r.client);
      case 'GET geo/mode':
      case 'GET geo/toggle':
        return engine.geoMode();
      case 'POST geo/mode':
        return engine.setGeo(await r.body());
      case 'POST geo/toggle':
        return engine.toggleCountry(await r.body());
      case 'GET baseline/export':
        return engine.baselineExport();
      case 'POST baseline/import':
        return engine.baselineImport(await r.body());
      case 'POST baseline/delete':
      case 'DELETE baseline/delete':
        return engine.baselineDelete();
      case 'GET autofetch/toggle':
      case 'GET autofetch/fetch-now':
        return engine.autofetchState();
      case 'POST autofetch/toggle':
        return engine.toggleAutofetch(await r.body());
      case 'POST autofetch/fetch-now': {
        const body = (await r.body()) as { feed?: unknown } | undefined;
        const feed = body && typeof body === 'object' && body.feed !== undefined ? String(body.feed) : undefined;
        return engine.fetchFeeds(feed);
      }
      case 'GET schedule':
        return engine.scheduleList();
      case 'POST schedule':
        return engine.setSchedule(await r.body());
      case 'DELETE schedule':
        return engine.setSchedule({
          task: r.query.get('task') ?? ((await r.body()) as { task?: unknown } | undefined)?.task,
          cron: null,
        });
      case 'GET block-pattern':
        return engine.patternList();
      case 'POST block-pattern':
        return engine.addPattern(await r.body());
      case 'DELETE block-pattern':
        return engine.removePattern(r.query.get('name') ?? ((await r.body()) as { name?: unknown } | undefined)?.name);
      case 'GET attacks':
        return engine.attackList();
      case 'POST attacks/blacklist':
        return engine.blacklistAttack(await r.body());
      case 'GET attacks/blacklist':
      case 'GET attacks/blacklist/status':
        return engine.blacklistStatus();
    }
    throw new MethodNotAllowed(`method ${method} not allowed on /${path}`);
  }

  return async (r: ControlRequest): Promise<ControlAnswer | null> => {
    if (!isControlPath(r.path)) return null;
    try {
      const body = await route(r);
      return { status: 200, body };
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
