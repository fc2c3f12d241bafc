import { type DashboardData, webhookRequest } from '@palisade/protocol';
import { request } from '../../../lib/api';
import { invalidate, useMutation } from '../../../lib/query';
import { checkRequest } from '../../../lib/schema';
import { webhookKey } from './get-webhook';

export const checkSetWebhook = (values: { url: string }) => checkRequest(webhookRequest, values);

/** The answer carries the signing secret for verifying deliveries. */
export const setWebhook = (url: string) =>
  request<DashboardData<'webhookSet'>>('PUT', '/api/account/webhook', { body: { url } });

export const useSetWebhook = () => useMutation(setWebhook, () => invalidate(webhookKey));
