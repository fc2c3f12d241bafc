import { lstatSync } from 'node:fs';
import { join } from 'node:path';
import { UPDATE_DIR, type UpdateReport } from '@palisade/protocol/agent-update';
import type { AgentUpdates, AgentUpdatesOptions } from '../update/agent-updates.js';

/** What the check-in loop asks of updates from the console (docs/agent.md, "The agent's part"). */
export interface UpdateHooks {
  prepare(): Promise<void>;
  report(): UpdateReport | null;
  delivered(sent: UpdateReport | null): void;
  offered(raw: unknown): void;
}

/**
 * The update module, loaded only once an offer arrives or `<state-dir>/update/` exists (a report,
 * a request or root's result to carry on with): an agent never offered an update never loads it
 * (docs/performance.md, "Agent memory").
 */
export function updateHooks(o: AgentUpdatesOptions): UpdateHooks {
  let updates: AgentUpdates | null = null;
  let loading: Promise<AgentUpdates> | null = null;
  const load = () => {
    loading ??= import('../update/agent-updates.js').then((m) => {
      updates = m.createAgentUpdates(o);
      return updates;
    });
    return loading;
  };
  let wanted = (() => {
    try {
      lstatSync(join(o.stateDir, UPDATE_DIR));
      return true;
    } catch {
      return false;
    }
  })();
  const failed = (err: Error) => o.log('error', `update: ${err.stack ?? err.message}`);
  return {
    async prepare() {
      if (!wanted) return;
      try {
        (updates ?? (await load())).refresh();
      } catch (err) {
        failed(err as Error);
      }
    },
    report: () => updates?.report() ?? null,
    delivered(sent) {
      try {
        updates?.delivered(sent);
      } catch (err) {
        failed(err as Error);
      }
    },
    offered(raw) {
      wanted = true;
      load()
        .then((u) => u.offer(raw))
        .catch(failed);
    },
  };
}
