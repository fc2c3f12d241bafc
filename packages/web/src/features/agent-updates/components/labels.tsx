import type { RolloutState, UpdateServerState } from '@palisade/protocol';

/**
 * A server's state in a rollout, in words and colour together (never colour alone), in the order a
 * server goes through them; `hint` is the longer sentence shown as its title and in the filter.
 */
export const SERVER_STATES: Record<UpdateServerState, { text: string; pill: string; hint: string }> = {
  pending: { text: 'Pending', pill: 'pill-pending', hint: 'its wave has not started' },
  offered: { text: 'Offered', pill: 'pill-running', hint: 'its next check-in answer carries the update' },
  downloading: { text: 'Downloading', pill: 'pill-running', hint: 'the agent is downloading and verifying' },
  applying: { text: 'Applying', pill: 'pill-running', hint: 'the root updater swaps and restarts the agent' },
  updated: { text: 'Updated', pill: 'pill-done', hint: 'checked in on the new version' },
  rolled_back: {
    text: 'Rolled back',
    pill: 'pill-late',
    hint: 'the new version did not check in in time or crashed: the previous one is back',
  },
  failed: { text: 'Failed', pill: 'pill-failed', hint: 'refused before anything changed' },
  skipped: {
    text: 'Skipped',
    pill: 'pill-warn',
    hint: 'left out: offline when its wave started, or the rollout ended',
  },
};
export const SERVER_STATE_ORDER = Object.keys(SERVER_STATES) as UpdateServerState[];

export function ServerStatePill({ state }: { state: UpdateServerState }) {
  const s = SERVER_STATES[state];
  return (
    <span className={`pill ${s.pill}`} title={s.hint} data-state={state}>
      {s.text}
    </span>
  );
}

const ROLLOUT_STATES: Record<RolloutState, { text: string; pill: string }> = {
  running: { text: 'Running', pill: 'pill-running' },
  completed: { text: 'Completed', pill: 'pill-done' },
  failed: { text: 'Failed', pill: 'pill-failed' },
  cancelled: { text: 'Cancelled', pill: 'pill-off' },
};

export function RolloutStatePill({ state }: { state: RolloutState }) {
  const s = ROLLOUT_STATES[state];
  return <span className={`pill ${s.pill}`}>{s.text}</span>;
}

export { minutesText, servers } from '../rollout-text';
