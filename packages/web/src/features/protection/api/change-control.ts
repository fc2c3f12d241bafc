import { proxyRequest } from '../../../lib/api';
import { invalidate, useMutation } from '../../../lib/query';
import { type ControlPath, controlKey, controlUrl } from './get-control';

export interface ControlChange {
  method: 'POST' | 'DELETE';
  path: ControlPath;
  body?: unknown;
  query?: Record<string, string>;
}

/** A write through the control proxy (needs control.edit); the agent's answer comes back as it is. */
export const changeControl = (serverId: number, change: ControlChange) => {
  return proxyRequest<unknown>(change.method, controlUrl(serverId, change.path, change.query), {
    ...(change.body !== undefined ? { body: change.body } : change.method === 'POST' ? { body: {} } : {}),
  });
};

/** After a write, the listed reads fetch again. */
export const useChangeControl = (serverId: number, refresh: ControlPath[]) =>
  useMutation(
    (change: ControlChange) => changeControl(serverId, change),
    () => {
      for (const path of refresh) invalidate(controlKey(serverId, path));
    },
  );
