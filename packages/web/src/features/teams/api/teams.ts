import {
  type DashboardData,
  type TeamNameRequest,
  type TeamSettingsRequest,
  teamNameRequest,
} from '@palisade/protocol';
import { request } from '../../../lib/api';
import { invalidate, useMutation, useQuery } from '../../../lib/query';
import { checkRequest } from '../../../lib/schema';

/** The person's teams with their role in each, oldest membership first (`GET /api/teams`). */
export const teamsKey = ['teams'];

export const getTeams = async () => (await request<DashboardData<'teams'>>('GET', '/api/teams')).teams;

export const useTeams = (enabled = true) => useQuery(enabled ? teamsKey : null, getTeams);

export const checkTeamName = (values: TeamNameRequest) => checkRequest(teamNameRequest, values);

export const createTeam = (body: TeamNameRequest) => request<DashboardData<'team'>>('POST', '/api/teams', { body });

export const useCreateTeam = (onDone: (out: DashboardData<'team'>) => void) =>
  useMutation(createTeam, (out) => {
    invalidate(teamsKey);
    onDone(out);
  });

/** `PATCH /api/teams/{id}`: the team's settings; `require_two_factor` only an owner may change (security.write). */
export const setTeamSettings = ({ id, ...body }: { id: number } & TeamSettingsRequest) =>
  request<DashboardData<'team'>>('PATCH', `/api/teams/${id}`, { body });

export const useSetTeamSettings = (onDone?: (out: DashboardData<'team'>) => void) =>
  useMutation(setTeamSettings, (out) => {
    invalidate(teamsKey);
    onDone?.(out);
  });
