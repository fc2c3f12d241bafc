import { useEffect, useMemo } from 'react';
import { Link } from 'react-router';
import { QueryView } from '../../components/states';
import { agentUpdatesKey, useAgentUpdates, useRollout } from '../../features/agent-updates/api/agent-updates';
import { RolloutHistory } from '../../features/agent-updates/components/rollout-history';
import { RolloutProgress } from '../../features/agent-updates/components/rollout-progress';
import { ServedRelease } from '../../features/agent-updates/components/served-release';
import { StartRolloutForm } from '../../features/agent-updates/components/start-rollout-form';
import { useServers } from '../../features/servers/api/get-servers';
import { invalidate } from '../../lib/query';
import { useTitle } from '../use-title';

/** The account's tags with how many servers carry each, for the rollout form's picker. */
function useTagCounts() {
  const fleet = useServers();
  return useMemo(() => {
    const counts = new Map<string, number>();
    for (const s of fleet.data?.servers ?? []) for (const t of s.tags) counts.set(t, (counts.get(t) ?? 0) + 1);
    return [...counts].sort(([a], [b]) => a.localeCompare(b)).map(([tag, servers]) => ({ tag, servers }));
  }, [fleet.data]);
}

/** One rollout, following it every few seconds while it runs; the list is asked again once it has ended. */
function LiveRollout({ id, running }: { id: number; running: boolean }) {
  const detail = useRollout(id, running);
  const shown = detail.data?.rollout.state;
  // The list and the rollout are asked at different times: when they disagree on whether it runs, the older answer is asked again.
  useEffect(() => {
    if (shown === undefined) return;
    if (running && shown !== 'running') void invalidate(agentUpdatesKey, { exact: true });
    if (!running && shown === 'running') void invalidate([...agentUpdatesKey, id], { exact: true });
  }, [running, shown, id]);
  return (
    <QueryView query={detail} what="Loading the rollout">
      {(d) => <RolloutProgress rollout={d.rollout} list={d.servers} />}
    </QueryView>
  );
}

/**
 * Fleet → Agent updates (docs/dashboard.md, "Agent updates"): the version served, a form to roll it
 * out in waves, the running rollout live, and the ones before it.
 */
export function AgentUpdatesPage() {
  useTitle('Agent updates');
  const tags = useTagCounts();
  const list = useAgentUpdates();
  const running = list.data?.rollouts.find((r) => r.state === 'running');
  return (
    <div className="stack">
      <p>
        <Link to="/dashboard">← Fleet</Link>
      </p>
      <h1>Agent updates</h1>
      <QueryView query={list} what="Loading agent updates">
        {(data) => {
          const past = data.rollouts.filter((r) => r.state !== 'running');
          return (
            <>
              <section className="card" aria-labelledby="served-title">
                <h2 id="served-title">Release</h2>
                <ServedRelease data={data} />
              </section>
              {running ? (
                <section className="card" aria-labelledby={`rollout-${running.id}-title`}>
                  <LiveRollout key={running.id} id={running.id} running />
                </section>
              ) : data.served_version !== null && data.signed ? (
                <section className="card stack" aria-labelledby="start-title">
                  <h2 id="start-title">Start a rollout</h2>
                  <StartRolloutForm version={data.served_version} outdated={data.outdated} tags={tags} />
                </section>
              ) : null}
              {!running && past[0] ? (
                <section className="card" aria-labelledby={`rollout-${past[0].id}-title`}>
                  <LiveRollout key={past[0].id} id={past[0].id} running={false} />
                </section>
              ) : null}
              <section className="card stack" aria-labelledby="history-title">
                <h2 id="history-title">Past rollouts</h2>
                <RolloutHistory rollouts={past} />
              </section>
            </>
          );
        }}
      </QueryView>
    </div>
  );
}

/** `/dashboard/agent-updates/<id>`: one rollout, live while it runs. */
export function RolloutPage({ id }: { id: number }) {
  useTitle(`Rollout ${id}`);
  const list = useAgentUpdates();
  const running = list.data?.rollouts.some((r) => r.id === id && r.state === 'running') ?? false;
  return (
    <div className="stack">
      <p>
        <Link to="/dashboard/agent-updates">← Agent updates</Link>
      </p>
      <h1>Rollout {id}</h1>
      <section className="card">
        <LiveRollout id={id} running={running} />
      </section>
    </div>
  );
}
