import type { TeamPermission, TeamRole } from '@palisade/protocol';
import { createContext, useContext } from 'react';

/**
 * The team in the dashboard's address (docs/dashboard.md, "Teams"; docs/decisions.md, "The team in
 * the dashboard's address"): `?team=<id>` beside the page's own parameters. lib/api.ts sends it as
 * `X-Palisade-Team`; app/app.tsx keeps it in the address across links that do not carry it.
 */
export const TEAM_PARAM = 'team';

/** The team id of an address's query, or null when it names none (or not a positive integer). */
export function teamOfSearch(search: string | URLSearchParams): number | null {
  const raw = (typeof search === 'string' ? new URLSearchParams(search) : search).get(TEAM_PARAM);
  return raw && /^[1-9][0-9]{0,15}$/.test(raw) ? Number(raw) : null;
}

/** `path` (which may carry its own query) with `team` in its query. */
export function teamAddress(path: string, team: number): string {
  const [base = '', query = ''] = path.split('?', 2);
  const params = new URLSearchParams(query);
  params.set(TEAM_PARAM, String(team));
  return `${base}?${params.toString()}`;
}

/** The team the dashboard acts in and the person's role and permissions there (packages/protocol/src/roles.ts). */
export interface CurrentTeam {
  id: number;
  name: string;
  role: TeamRole;
  /** Every member must have two-factor sign-in on to act in the team (docs/teams.md). */
  require_two_factor: boolean;
  permissions: readonly TeamPermission[];
}

export const TeamContext = createContext<CurrentTeam | null>(null);

/** The current team, or null while it is not known yet (every write is then left to the console). */
export const useCurrentTeam = () => useContext(TeamContext);

/** Whether the current role allows `permission`; true while the team is not known (the console decides). */
export function useCan(permission: TeamPermission): boolean {
  const team = useCurrentTeam();
  return team ? team.permissions.includes(permission) : true;
}
