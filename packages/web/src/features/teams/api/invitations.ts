import {
  type DashboardData,
  type InvitationRequest,
  invitationRequest,
  type RegisterRequest,
  registerRequest,
} from '@palisade/protocol';
import { request } from '../../../lib/api';
import { invalidate, useMutation, useQuery } from '../../../lib/query';
import { checkRequest } from '../../../lib/schema';
import { teamsKey } from './teams';

/** What a link is (team, role, who invited), asked before anyone signs in (docs/teams.md, "Invitations"). */
export const invitationKey = (token: string) => ['invitation', token];

export const previewInvitation = async (token: string) =>
  (await request<DashboardData<'invitationPreview'>>('GET', `/api/invitations/${encodeURIComponent(token)}`))
    .invitation;

export const useInvitation = (token: string) => useQuery(invitationKey(token), () => previewInvitation(token));

/** Signed in: no body. Signed out: the sign-up (`registerRequest`), and the console sets the session cookie. */
export const acceptInvitation = ({ token, signUp }: { token: string; signUp?: RegisterRequest }) =>
  request<DashboardData<'invitationAccepted'>>('POST', `/api/invitations/${encodeURIComponent(token)}/accept`, {
    body: signUp ?? {},
  });

export const useAcceptInvitation = (onDone: (out: DashboardData<'invitationAccepted'>) => void) =>
  useMutation(acceptInvitation, (out) => {
    invalidate(teamsKey);
    onDone(out);
  });

export const checkSignUp = (values: RegisterRequest) => checkRequest(registerRequest, values);

// ---- the team's own invitations (Settings → Members) ----

export const pendingInvitationsKey = ['team', 'invitations'];

export const getInvitations = async () =>
  (await request<DashboardData<'invitations'>>('GET', '/api/team/invitations')).invitations;

export const usePendingInvitations = (enabled: boolean) =>
  useQuery(enabled ? pendingInvitationsKey : null, getInvitations);

export const checkInvitation = (values: InvitationRequest) => checkRequest(invitationRequest, values);

export const createInvitation = (body: InvitationRequest) =>
  request<DashboardData<'invitationCreated'>>('POST', '/api/team/invitations', { body });

export const useCreateInvitation = () => useMutation(createInvitation, () => invalidate(pendingInvitationsKey));

export const revokeInvitation = (id: number) =>
  request<DashboardData<'revoked'>>('DELETE', `/api/team/invitations/${id}`);

export const useRevokeInvitation = () => useMutation(revokeInvitation, () => invalidate(pendingInvitationsKey));
