import type { DashboardData } from '@palisade/protocol';
import { z } from 'zod';
import { request } from '../../../lib/api';
import { invalidate, useMutation } from '../../../lib/query';
import { parse, text } from '../../../lib/schema';
import { webhookKey } from './get-webhook';

export const setWebhookInput = z.object({
  url: text({ min: 1, max: 2048 }).regex(/^https?:\/\/\S+$/i, 'Enter an http(s) URL.'),
});

export const checkSetWebhook = (values: { url: string }) => parse(setWebhookInput, values);

/** The answer carries the signing secret for verifying deliveries. */
export const setWebhook = (url: string) =>
  request<DashboardData<'webhookSet'>>('PUT', '/api/account/webhook', { body: { url } });

export const useSetWebhook = () => useMutation(setWebhook, () => invalidate(webhookKey));
