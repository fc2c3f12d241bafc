import { request } from '../../../lib/api';
import { invalidate, useMutation } from '../../../lib/query';
import { alertChannelsKey } from './get-channels';
import type { AlertChannel, ChannelKind } from './types';

export interface ChannelForm {
  name: string;
  kind: ChannelKind;
  target: string;
}

/** The form's checks; the console checks the URL against its target policy too. */
export function checkChannel(
  form: ChannelForm,
): { ok: true; body: Record<string, unknown> } | { ok: false; error: string } {
  const name = form.name.trim();
  if (!name) return { ok: false, error: 'Name: enter a name.' };
  const target = form.target.trim();
  if (form.kind === 'slack' || form.kind === 'discord') {
    if (!/^https?:\/\/\S+$/i.test(target))
      return { ok: false, error: 'URL: enter the incoming webhook URL (http or https).' };
    return { ok: true, body: { name, kind: form.kind, url: target } };
  }
  if (form.kind === 'email') {
    if (!/^[^@\s]+@[^@\s]+$/.test(target)) return { ok: false, error: 'E-mail: enter an address.' };
    return { ok: true, body: { name, kind: form.kind, email: target } };
  }
  return { ok: true, body: { name, kind: form.kind } };
}

export const createChannel = (body: Record<string, unknown>) =>
  request<{ channel: AlertChannel }>('POST', '/api/alerts/channels', { body });

export const useCreateChannel = () => useMutation(createChannel, () => invalidate(alertChannelsKey));
