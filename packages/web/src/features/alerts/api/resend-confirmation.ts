import { request } from '../../../lib/api';
import { invalidate, useMutation } from '../../../lib/query';
import { alertChannelsKey } from './get-channels';
import type { AlertChannel } from './types';

/** Sends an e-mail channel's confirmation mail again (the earlier link stops working). */
export const resendConfirmation = (id: number) =>
  request<{ channel: AlertChannel }>('POST', `/api/alerts/channels/${id}/confirmation`);

export const useResendConfirmation = () => useMutation(resendConfirmation, () => invalidate(alertChannelsKey));
