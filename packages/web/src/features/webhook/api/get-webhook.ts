import type { DashboardData, WebhookDelivery } from '@palisade/protocol';
import { request } from '../../../lib/api';
import { useQuery } from '../../../lib/query';

export const webhookKey = ['webhook'];

export const getWebhook = () => request<DashboardData<'webhook'>>('GET', '/api/account/webhook');

export const useWebhook = () => useQuery(webhookKey, getWebhook, { intervalMs: 30_000 });

export interface DeliveredEvent {
  /** The notification's id. */
  id: number;
  kind: string;
  status: WebhookDelivery['status'];
  /** Newest first, as the console lists them. */
  attempts: WebhookDelivery[];
}

/** The delivery log as one entry per notification with its attempts under it, newest event first. */
export function deliveriesByEvent(deliveries: WebhookDelivery[]): DeliveredEvent[] {
  const events = new Map<number, DeliveredEvent>();
  for (const d of deliveries) {
    const event = events.get(d.notification_id);
    if (event) event.attempts.push(d);
    else events.set(d.notification_id, { id: d.notification_id, kind: d.kind, status: d.status, attempts: [d] });
  }
  return [...events.values()];
}
