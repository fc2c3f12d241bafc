import type { DashboardData, DashboardServer } from '@palisade/protocol';
import { request } from '../../../lib/api';
import { invalidate, useMutation } from '../../../lib/query';
import { serverKey } from './get-server';
import { serversKey } from './get-servers';

export type ConnectionMode = DashboardServer['connection']['mode'];

/** `PUT /api/servers/:id/connection`: how the console reaches the server (control.edit; audited). */
export const setConnection = (input: { id: number; mode: ConnectionMode }) =>
  request<DashboardData<'server'>>('PUT', `/api/servers/${input.id}/connection`, { body: { mode: input.mode } });

export const useSetConnection = (id: number, onDone?: () => void) =>
  useMutation(setConnection, () => {
    invalidate(serverKey(id));
    invalidate(serversKey);
    onDone?.();
  });
