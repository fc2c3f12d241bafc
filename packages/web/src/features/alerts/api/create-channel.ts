import { type AlertChannelRequest, alertChannelRequest } from '@palisade/protocol';
import { request } from '../../../lib/api';
import { invalidate, useMutation } from '../../../lib/query';
import { checkRequest } from '../../../lib/schema';
import { alertChannelsKey } from './get-channels';
import type { AlertChannel, ChannelKind } from './types';

export interface ChannelForm {
  name: string;
  kind: ChannelKind;
  target: string;
}

const CHANNEL_FIELDS: Record<string, string> = { name: 'Name', kind: 'Kind', url: 'URL', email: 'E-mail' };

/** The body the form sends: the target goes in `url` for slack and discord, in `email` for email. */
export function channelBody(form: ChannelForm): AlertChannelRequest {
  const body: AlertChannelRequest = { name: form.name, kind: form.kind };
  if (form.kind === 'slack' || form.kind === 'discord') body.url = form.target;
  if (form.kind === 'email') body.email = form.target;
  return body;
}

/** The console's own check of the channel; the console checks the URL against its target policy too. */
export function checkChannel(
  form: ChannelForm,
): { ok: true; body: AlertChannelRequest } | { ok: false; field: string; error: string } {
  const checked = checkRequest(alertChannelRequest, channelBody(form));
  if (checked.ok) return { ok: true, body: checked.value };
  const [field, message] = Object.entries(checked.errors)[0]!;
  return { ok: false, field, error: `${CHANNEL_FIELDS[field] ?? field}: ${message}` };
}

export const createChannel = (body: AlertChannelRequest) =>
  request<{ channel: AlertChannel }>('POST', '/api/alerts/channels', { body });

export const useCreateChannel = () => useMutation(createChannel, () => invalidate(alertChannelsKey));
