import { request } from '../../../lib/api';
import { invalidate, useMutation } from '../../../lib/query';
import type { ChannelTestResult } from './types';

/** "Send a test": one delivery now; the answer says whether it arrived. */
export const testChannel = (id: number) => request<ChannelTestResult>('POST', `/api/alerts/channels/${id}/test`);

// The channel's state and the history both change.
export const useTestChannel = () => useMutation(testChannel, () => invalidate(['alerts']));
