import type { Rollout, RolloutServer, StartRolloutRequest } from '@palisade/protocol';
import { request } from '../../../lib/api';
import { invalidate, queryClient, useQuery } from '../../../lib/query';

/**
 * Staged agent updates (docs/fleet.md, "Agent updates"; shapes in
 * packages/protocol/src/agent-update-schemas.ts): the version served, the rollouts, one rollout's servers.
 */
export const agentUpdatesKey = ['agent-updates'];

export interface AgentUpdates {
  served_version: string | null;
  signed: boolean;
  outdated: number;
  rollouts: Rollout[];
}
export interface RolloutDetail {
  rollout: Rollout;
  servers: RolloutServer[];
}

/** While a rollout runs its page follows it every 3 s; otherwise every 30 s (a rollout started elsewhere shows up). */
export const LIVE_MS = 3000;
const IDLE_MS = 30_000;

export const getAgentUpdates = () => request<AgentUpdates>('GET', '/api/agent-updates');

/** The list, refreshed every 3 s while the last answer had a rollout running, else every 30 s. */
export function useAgentUpdates() {
  const last = queryClient.getQueryData<AgentUpdates>(agentUpdatesKey);
  const running = last?.rollouts.some((r) => r.state === 'running') ?? false;
  return useQuery(agentUpdatesKey, getAgentUpdates, { intervalMs: running ? LIVE_MS : IDLE_MS });
}

export const useRollout = (id: number | null, running: boolean) =>
  useQuery(
    id === null ? null : [...agentUpdatesKey, id],
    () => request<RolloutDetail>('GET', `/api/agent-updates/${id}`),
    running ? { intervalMs: LIVE_MS } : {},
  );

export async function startRollout(input: StartRolloutRequest) {
  const answer = await request<Rollout | { rollout: Rollout }>('POST', '/api/agent-updates', { body: input });
  await invalidate(agentUpdatesKey);
  return 'rollout' in answer ? answer.rollout : answer;
}

export async function cancelRollout(id: number) {
  const answer = await request<unknown>('POST', `/api/agent-updates/${id}/cancel`);
  await invalidate(agentUpdatesKey);
  return answer;
}
