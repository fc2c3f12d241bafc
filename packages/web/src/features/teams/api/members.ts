import { type DashboardData, type MemberRoleRequest, memberRoleRequest } from '@palisade/protocol';
import { request } from '../../../lib/api';
import { invalidate, useMutation, useQuery } from '../../../lib/query';
import { checkRequest } from '../../../lib/schema';

/** Members on a page of Settings → Members: the console's pages (docs/teams.md, "Members"). */
export const MEMBERS_PAGE = 50;

/** Every page of every search: a change invalidates them all. */
export const membersKey = ['team', 'members'];

/** A page of the team's members (`GET /api/team/members`), those whose name or e-mail holds `q` when given. */
export const getMembersPage = (q: string, cursor: string | null) =>
  request<DashboardData<'members'>>('GET', '/api/team/members', {
    query: { limit: String(MEMBERS_PAGE), ...(q ? { q } : {}), ...(cursor ? { cursor } : {}) },
  });

export const useMembersPage = (q: string, cursor: string | null) =>
  useQuery([...membersKey, q, cursor], () => getMembersPage(q, cursor));

/** At most this many of the members without two-factor: enough to name a few and to find oneself among them. */
const WITHOUT_TWO_FACTOR = 200;

/** The members who do not meet a two-factor requirement (`?two_factor=off`), with how many there are in all. */
export const useMembersWithoutTwoFactor = () =>
  useQuery([...membersKey, 'two_factor=off'], () =>
    request<DashboardData<'members'>>('GET', '/api/team/members', {
      query: { limit: String(WITHOUT_TWO_FACTOR), two_factor: 'off' },
    }),
  );

export const checkMemberRole = (values: MemberRoleRequest) => checkRequest(memberRoleRequest, values);

export const setMemberRole = ({ personId, role }: { personId: number } & MemberRoleRequest) =>
  request<DashboardData<'member'>>('PATCH', `/api/team/members/${personId}`, { body: { role } });

export const useSetMemberRole = () => useMutation(setMemberRole, () => invalidate(membersKey));

/** Removing a member, or (one's own id) leaving the team. */
export const removeMember = (personId: number) =>
  request<DashboardData<'memberRemoved'>>('DELETE', `/api/team/members/${personId}`);

export const useRemoveMember = (onDone?: () => void) =>
  useMutation(removeMember, () => {
    invalidate(membersKey);
    onDone?.();
  });
