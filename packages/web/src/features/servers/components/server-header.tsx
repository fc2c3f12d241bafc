import type { DashboardServer } from '@palisade/protocol';
import { ageText } from '@palisade/protocol/server-state';
import { Link } from 'react-router';
import { ServerScore, StateBadge, UnderAttackBadge } from '../../../components/score';
import { since } from '../../../lib/format';
import { NameAndTags } from './name-and-tags';

/** How the console reaches the agent: directly, or through the link the agent opened (docs/agent.md, "Outbound link"). */
function ConnectionMode({ connection, asOf }: { connection: DashboardServer['connection']; asOf: number }) {
  if (connection.mode === 'direct')
    return (
      <span className="muted" data-testid="connection" title="The console calls the agent at its address">
        direct connection
      </span>
    );
  const up = connection.link === 'up';
  return (
    <span
      className={`pill ${up ? '' : 'pill-warn'}`}
      data-testid="connection"
      title={
        up
          ? 'The agent keeps a link open to the console; calls go through it'
          : 'The agent connects out to the console, and its link is down: it reconnects by itself within its check-in interval; check that the server can reach the console'
      }
    >
      outbound link {up ? 'up' : 'down'}
      {connection.since ? ` for ${ageText(Math.max(0, asOf - connection.since))}` : ''}
    </span>
  );
}

/** The note beside a server that is not online, in its state's colour (docs/fleet.md, "Server states"). */
const STATE_NOTE: Record<Exclude<DashboardServer['state'], 'online'>, string> = {
  late: 'note-late',
  unreachable: 'note-warn',
  offline: 'note-bad',
};

export function ServerHeader({ server }: { server: DashboardServer }) {
  return (
    <div className="server-head">
      <h1 tabIndex={-1}>{server.label}</h1>
      <div className="server-meta">
        <StateBadge state={server.state} reason={server.state_reason} />
        <UnderAttackBadge count={server.attacks_active} />
        <ServerScore server={server} />
        <span className="muted">{server.hostname}</span>
        <span className="muted">{server.public_ip ?? 'no public IP yet'}</span>
        <span className="muted">last check-in {since(server.last_seen, server.as_of)}</span>
        <ConnectionMode connection={server.connection} asOf={server.as_of} />
        {server.agent_outdated ? (
          <Link
            className="pill pill-warn"
            to="/dashboard/agent-updates"
            title="Roll out the served version from Agent updates, or run the install line on the server again to upgrade in place"
          >
            agent {server.agent_version} is outdated
          </Link>
        ) : null}
      </div>
      {server.tags.length > 0 ? (
        <ul className="tags" aria-label="Tags">
          {server.tags.map((t) => (
            <li key={t}>
              <Link className="tag" to={`/dashboard?tag=${encodeURIComponent(t)}`} title={`Servers tagged ${t}`}>
                {t}
              </Link>
            </li>
          ))}
        </ul>
      ) : null}
      <NameAndTags server={server} />
      {server.state !== 'online' ? (
        <p className={`note ${STATE_NOTE[server.state]}`} data-testid="state-reason">
          {server.state_reason}.
        </p>
      ) : null}
      {!server.enrolled ? (
        <p className="note note-bad">
          This server has no check-in token. Use “Make enrolment command” under Agent key.
        </p>
      ) : null}
    </div>
  );
}
