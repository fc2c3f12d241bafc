import type { DashboardData } from '@palisade/protocol';
import { request } from '../../../lib/api';
import { useQuery } from '../../../lib/query';

export const getSingleSignOn = () => request<DashboardData<'singleSignOn'>>('GET', '/api/auth/oidc');

/** Whether the console has an OpenID provider for sign-in, and its name for the button. */
export const useSingleSignOn = () => useQuery(['single-sign-on'], getSingleSignOn);

/** The console's sign-in through the provider, returning to `next` (a dashboard path) afterwards. */
export const singleSignOnStart = (next: string) => `/api/auth/oidc/start?return_to=${encodeURIComponent(next)}`;
