import { z } from 'zod';
import { request } from '../../../lib/api';
import { invalidate, useMutation } from '../../../lib/query';
import { parse } from '../../../lib/schema';
import type { DashboardServer } from '../../../lib/wire';
import { agentKey } from './add-server';
import { serverKey } from './get-server';
import { serversKey } from './get-servers';

/** Saving a rotated agent key: the console checks it against the agent before storing it. */
export const updateKeyInput = z.object({ api_key: agentKey });

export const checkUpdateKey = (values: { api_key: string }) => parse(updateKeyInput, values);

export const updateServer = (input: { id: number; name?: string; api_url?: string; api_key?: string }) => {
  const { id, ...changes } = input;
  return request<{ server: DashboardServer }>('PATCH', `/api/servers/${id}`, { body: changes });
};

export const useUpdateServer = (id: number, onDone?: () => void) =>
  useMutation(updateServer, () => {
    invalidate(serverKey(id));
    invalidate(serversKey);
    onDone?.();
  });
