import { type DashboardData, type UpdateServerRequest, updateServerRequest } from '@palisade/protocol';
import { request } from '../../../lib/api';
import { invalidate, useMutation } from '../../../lib/query';
import { checkRequest } from '../../../lib/schema';
import { serverKey } from './get-server';
import { serversKey } from './get-servers';

/** Saving a rotated agent key: the console checks it against the agent before storing it. */
export const checkUpdateKey = (values: { api_key: string }) => checkRequest(updateServerRequest, values);

/** "web, eu-west" → ["web", "eu-west"]. */
export const tagList = (text: string) => text.split(/[\s,]+/).filter(Boolean);

/** Name and tags as typed: the label's limits and each tag's rule (packages/protocol/src/server-tags.ts). */
export const checkNameAndTags = (values: { name: string; tags: string }) =>
  checkRequest(updateServerRequest, { name: values.name, tags: tagList(values.tags) });

export const updateServer = (input: { id: number } & UpdateServerRequest) => {
  const { id, ...changes } = input;
  return request<DashboardData<'server'>>('PATCH', `/api/servers/${id}`, { body: changes });
};

export const useUpdateServer = (id: number, onDone?: () => void) =>
  useMutation(updateServer, () => {
    invalidate(serverKey(id));
    invalidate(serversKey);
    onDone?.();
  });
