import { scoreBand } from '../lib/format';

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

export function OnlineBadge({ online }: { online: boolean }) {
  return <span className={`pill ${online ? 'pill-ok' : 'pill-off'}`}>{online ? 'Online' : 'Offline'}</span>;
}
