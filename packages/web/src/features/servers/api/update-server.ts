import { type DashboardData, serverTagsInput } from '@palisade/protocol';
import { z } from 'zod';
import { request } from '../../../lib/api';
import { invalidate, useMutation } from '../../../lib/query';
import { parse, text } from '../../../lib/schema';
import { agentKey } from './add-server';
import { serverKey } from './get-server';
import { serversKey } from './get-servers';

/** Saving a rotated agent key: the console checks it against the agent before storing it. */
export const updateKeyInput = z.object({ api_key: agentKey });

export const checkUpdateKey = (values: { api_key: string }) => parse(updateKeyInput, values);

/** Name and tags as typed: the label's limits and each tag's rule (packages/protocol/src/server-tags.ts). */
export const nameAndTagsInput = z.object({
  name: text({ min: 1, max: 100 }),
  tags: z
    .string()
    .transform((v) => v.split(/[\s,]+/).filter(Boolean))
    .pipe(serverTagsInput)
    .transform((tags) => tags.join(', ')),
});

export const checkNameAndTags = (values: { name: string; tags: string }) => parse(nameAndTagsInput, values);

/** "web, eu-west" → ["web", "eu-west"] (after checkNameAndTags). */
export const tagList = (text: string) => text.split(/[\s,]+/).filter(Boolean);

export const updateServer = (input: {
  id: number;
  name?: string;
  tags?: string[];
  api_url?: string;
  api_key?: string;
}) => {
  const { id, ...changes } = input;
  return request<DashboardData<'server'>>('PATCH', `/api/servers/${id}`, { body: changes });
};

export const useUpdateServer = (id: number, onDone?: () => void) =>
  useMutation(updateServer, () => {
    invalidate(serverKey(id));
    invalidate(serversKey);
    onDone?.();
  });
