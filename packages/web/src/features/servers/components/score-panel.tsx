import { ScoreBadge } from '../../../components/score';
import { QueryView } from '../../../components/states';
import type { ScoreComponents } from '../../../lib/wire';
import { useServerSection } from '../api/get-server-section';

const NAMES: Record<keyof ScoreComponents, string> = {
  cpu: 'CPU',
  memory: 'Memory',
  disk: 'Disk',
  network: 'Network',
  stability: 'Stability',
  freshness: 'Freshness',
};

/** The score, its six weighted components and the notes that explain every lost point. */
export function ScorePanel({ serverId }: { serverId: number }) {
  const query = useServerSection(serverId, 'score');
  return (
    <section className="card" aria-labelledby="score-title">
      <h2 id="score-title">Health score</h2>
      <QueryView query={query} what="Loading the score">
        {(s) => (
          <>
            <p>
              <ScoreBadge score={s.score} large /> <span className="muted">of 1000</span>
            </p>
            <ul className="components">
              {(Object.keys(NAMES) as (keyof ScoreComponents)[]).map((k) => {
                const weight = s.weights[k] || 1;
                const value = s.components[k];
                return (
                  <li key={k}>
                    <span className="component-name">{NAMES[k]}</span>
                    <meter min={0} max={weight} value={value} aria-label={`${NAMES[k]} ${value} of ${weight}`} />
                    <span className="component-value">
                      {value}/{weight}
                    </span>
                  </li>
                );
              })}
            </ul>
            {s.notes.length > 0 ? (
              <>
                <h3>Notes</h3>
                <ul className="notes">
                  {s.notes.map((n) => (
                    <li key={n}>{n}</li>
                  ))}
                </ul>
              </>
            ) : (
              <p className="muted">No points lost.</p>
            )}
          </>
        )}
      </QueryView>
    </section>
  );
}
