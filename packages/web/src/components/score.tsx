import type { ServerStateName } from '@palisade/protocol';
import { scoreBand, since } from '../lib/format';

const WORDS = { good: 'Good', fair: 'Fair', poor: 'Poor' } as const;

/** The score with its band: colour and word together, never colour alone. */
export function ScoreBadge({ score, large }: { score: number; large?: boolean }) {
  const band = scoreBand(score);
  return (
    <span className={`score score-${band}${large ? ' score-large' : ''}`}>
      <strong>{score}</strong>
      <span className="score-word">{WORDS[band]}</span>
    </span>
  );
}

/**
 * An offline server's score: the value of its last check-in, greyed and labelled with its time,
 * never in a band's colour (docs/fleet.md, "Server states").
 */
export function LastKnownScore({
  score,
  at,
  asOf,
  large,
}: {
  score: number;
  at: number;
  asOf: number;
  large?: boolean;
}) {
  return (
    <span className={`score score-stale${large ? ' score-large' : ''}`} data-testid="last-known-score">
      <strong>{score}</strong>
      <span className="score-word">last known, {since(at, asOf)}</span>
    </span>
  );
}

/** The score a server shows in its state: live, or the last known one when offline. */
export function ServerScore({
  server,
  large,
}: {
  server: {
    score: number;
    last_known_score: { score: number; at: number } | null;
    as_of: number;
    state?: ServerStateName;
  };
  large?: boolean;
}) {
  const last = server.last_known_score;
  // Offline with no check-in on record: there is no score to show, and 0 in the poor band would say
  // something was measured (docs/fleet.md, "Server states").
  if (!last && server.state === 'offline')
    return (
      <span className={`score score-stale${large ? ' score-large' : ''}`} data-testid="no-score">
        <strong>—</strong>
        <span className="score-word">no check-in yet</span>
      </span>
    );
  return last ? (
    <LastKnownScore score={last.score} at={last.at} asOf={server.as_of} large={large} />
  ) : (
    <ScoreBadge score={server.score} large={large} />
  );
}

const STATE_WORDS: Record<ServerStateName, { text: string; pill: string }> = {
  online: { text: 'Online', pill: 'pill-ok' },
  late: { text: 'Late', pill: 'pill-late' },
  unreachable: { text: 'Unreachable', pill: 'pill-warn' },
  offline: { text: 'Offline', pill: 'pill-off' },
};

/** The server's state in a word; the reason goes in the title (and is shown beside it on the server page). */
export function StateBadge({ state, reason }: { state: ServerStateName; reason?: string }) {
  const { text, pill } = STATE_WORDS[state];
  return (
    <span className={`pill ${pill}`} data-testid="state-badge" title={reason}>
      {text}
    </span>
  );
}

export function UnderAttackBadge({ count }: { count: number | null }) {
  if (!count) return null;
  return <span className="pill pill-bad">Under attack ({count})</span>;
}
