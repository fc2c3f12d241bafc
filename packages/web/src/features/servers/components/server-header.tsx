import { OnlineBadge, ScoreBadge } from '../../../components/score';
import { timeAgo } from '../../../lib/format';
import type { DashboardServer } from '../../../lib/wire';

export function ServerHeader({ server }: { server: DashboardServer }) {
  return (
    <div className="server-head">
      <h1 tabIndex={-1}>{server.label}</h1>
      <div className="server-meta">
        <OnlineBadge online={server.online} />
        <ScoreBadge score={server.score} />
        <span className="muted">{server.hostname}</span>
        <span className="muted">{server.public_ip ?? 'no public IP yet'}</span>
        <span className="muted">last seen {timeAgo(server.last_seen)}</span>
      </div>
      {!server.enrolled ? (
        <p className="note note-bad">
          This server has no check-in token. Use “Make enrolment command” under Agent key.
        </p>
      ) : null}
    </div>
  );
}
