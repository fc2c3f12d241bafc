import { request } from '../../../lib/api';
import { useQuery } from '../../../lib/query';
import type { WebhookSettings } from '../../../lib/wire';

export const webhookKey = ['webhook'];

export const getWebhook = () => request<WebhookSettings>('GET', '/api/account/webhook');

export const useWebhook = () => useQuery(webhookKey, getWebhook, { intervalMs: 30_000 });
