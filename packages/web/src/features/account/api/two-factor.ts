import type { DashboardData } from '@palisade/protocol';
import { request } from '../../../lib/api';
import { invalidate, useMutation, useQuery } from '../../../lib/query';

export const twoFactorKey = ['account', 'two-factor'];

export const getTwoFactor = () => request<DashboardData<'twoFactor'>>('GET', '/api/account/two-factor');
export const useTwoFactor = () => useQuery(twoFactorKey, getTwoFactor);

/** Step 1: the password; answers the new secret (shown once) and its otpauth:// address. */
export const setupTwoFactor = (password: string) =>
  request<DashboardData<'twoFactorSetup'>>('POST', '/api/account/two-factor/setup', { body: { password } });
export const useSetupTwoFactor = () => useMutation(setupTwoFactor);

/** Step 2: a code from the app; answers the 10 recovery codes, once. */
export const enableTwoFactor = (code: string) =>
  request<DashboardData<'twoFactorEnabled'>>('POST', '/api/account/two-factor/enable', { body: { code } });
export const useEnableTwoFactor = () => useMutation(enableTwoFactor, () => invalidate(twoFactorKey));

export const disableTwoFactor = (password: string) =>
  request<DashboardData<'twoFactor'>>('POST', '/api/account/two-factor/disable', { body: { password } });
export const useDisableTwoFactor = () => useMutation(disableTwoFactor, () => invalidate(twoFactorKey));
