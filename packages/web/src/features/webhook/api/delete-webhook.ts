import type { DashboardData } from '@palisade/protocol';
import { request } from '../../../lib/api';
import { invalidate, useMutation } from '../../../lib/query';
import { webhookKey } from './get-webhook';

export const deleteWebhook = () => request<DashboardData<'deleted'>>('DELETE', '/api/account/webhook');

export const useDeleteWebhook = () => useMutation(deleteWebhook, () => invalidate(webhookKey));
