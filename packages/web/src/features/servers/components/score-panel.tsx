import type { DashboardServer, ScoreComponents } from '@palisade/protocol';
import { SCORE_WEIGHTS } from '@palisade/protocol/server-state';
import { ServerScore } from '../../../components/score';
import { figure } from '../../../lib/format';

const NAMES: Record<keyof ScoreComponents, string> = {
  cpu: 'CPU',
  memory: 'Memory',
  disk: 'Disk',
  network: 'Network',
  stability: 'Stability',
  freshness: 'Freshness',
};

/**
 * The score, its six weighted components and the notes that explain every lost point. It reads the
 * same answer as the page header, so both count time from the same console clock.
 */
export function ScorePanel({ server }: { server: DashboardServer }) {
  const offline = server.last_known_score !== null;
  return (
    <section className="card" aria-labelledby="score-title">
      <h2 id="score-title">Health score</h2>
      <p>
        <ServerScore server={server} large /> <span className="muted">of 1000</span>
      </p>
      {offline ? (
        <p className="muted">
          Offline: the score above is the last known one, from its last check-in. The parts below are counted now,
          losing freshness without check-ins ({server.score} in all).
        </p>
      ) : null}
      <ul className="components">
        {(Object.keys(NAMES) as (keyof ScoreComponents)[]).map((k) => {
          const weight = SCORE_WEIGHTS[k];
          const value = server.score_components[k];
          return (
            <li key={k}>
              <span className="component-name">{NAMES[k]}</span>
              <meter min={0} max={weight} value={value} aria-label={`${NAMES[k]} ${value} of ${weight}`} />
              <span className="component-value">
                {figure(value)}/{weight}
              </span>
            </li>
          );
        })}
      </ul>
      {server.score_notes.length > 0 ? (
        <>
          <h3>Notes</h3>
          <ul className="notes">
            {server.score_notes.map((n) => (
              <li key={n}>{n}</li>
            ))}
          </ul>
        </>
      ) : (
        <p className="muted">No points lost.</p>
      )}
    </section>
  );
}
