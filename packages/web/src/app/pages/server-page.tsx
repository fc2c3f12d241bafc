import type { Me } from '@palisade/protocol';
import { Link, Outlet, useNavigate } from 'react-router';
import { RoleGate } from '../../components/role-note';
import { ErrorNote, Loading } from '../../components/states';
import { ServerBansPanel } from '../../features/fleet/components/server-bans';
import { AttacksPanel } from '../../features/protection/components/attacks-panel';
import { useServer } from '../../features/servers/api/get-server';
import { AgentKeyPanel } from '../../features/servers/components/agent-key-panel';
import { BenchmarksPanel } from '../../features/servers/components/benchmarks-panel';
import { ConnectionPanel } from '../../features/servers/components/connection-panel';
import { FactsPanel } from '../../features/servers/components/facts-panel';
import { HistoryCharts } from '../../features/servers/components/history-charts';
import { LiveMetrics } from '../../features/servers/components/live-metrics';
import { RemoveServer } from '../../features/servers/components/remove-server';
import { ScorePanel } from '../../features/servers/components/score-panel';
import { ServerHeader } from '../../features/servers/components/server-header';
import { ApiError } from '../../lib/api';
import { useTitle } from '../use-title';

export const SERVER_TABS = [
  { id: 'overview', title: 'Overview' },
  { id: 'history', title: 'History' },
  { id: 'protection', title: 'Protection' },
  { id: 'attacks', title: 'Attacks' },
  { id: 'benchmarks', title: 'Benchmarks' },
  { id: 'settings', title: 'Connection, key and removal' },
] as const;

export type ServerTab = (typeof SERVER_TABS)[number]['id'];

/**
 * One server: header, tab links (real links, so each view has an address) and the chosen view. The
 * protection tab's sub-pages are nested routes (app.tsx) drawn in the Outlet.
 */
export function ServerPage({ id, tab, me }: { id: number; tab: ServerTab; me: Me }) {
  const query = useServer(id);
  const navigate = useNavigate();
  const server = query.data?.server;
  useTitle(server ? server.label : 'Server');
  const canRead = me.permissions.includes('control.read');
  const canEdit = me.permissions.includes('control.edit');

  if (!server) {
    if (query.error instanceof ApiError && query.error.status === 404)
      return (
        <div className="stack">
          <h1>Server not found</h1>
          <p>
            It may have been removed. <Link to="/dashboard">Back to the fleet</Link>
          </p>
        </div>
      );
    if (query.errorMessage) return <ErrorNote message={query.errorMessage} onRetry={() => void query.refetch()} />;
    return <Loading what="Loading the server" />;
  }

  return (
    <div className="stack">
      <p>
        <Link to="/dashboard">← Fleet</Link>
      </p>
      <ServerHeader server={server} />
      <nav className="tabs" aria-label="Server sections">
        {SERVER_TABS.map((t) => (
          <Link
            key={t.id}
            to={`/dashboard/servers/${id}${t.id === 'overview' ? '' : `/${t.id}`}`}
            aria-current={t.id === tab ? 'page' : undefined}
          >
            {t.title}
          </Link>
        ))}
      </nav>
      {tab === 'overview' ? (
        <div className="grid-2">
          <div className="stack">
            <LiveMetrics serverId={id} />
            <FactsPanel serverId={id} />
            <ServerBansPanel serverId={id} />
          </div>
          <ScorePanel server={server} />
        </div>
      ) : null}
      {tab === 'history' ? <HistoryCharts serverId={id} /> : null}
      {tab === 'protection' ? <Outlet /> : null}
      {tab === 'attacks' ? (
        canRead ? (
          <AttacksPanel serverId={id} canEdit={canEdit} />
        ) : (
          <p className="note note-muted">
            Your account cannot view attacks: it lacks the <code>control.read</code> permission.
          </p>
        )
      ) : null}
      {tab === 'benchmarks' ? <BenchmarksPanel serverId={id} /> : null}
      {tab === 'settings' ? (
        <div className="stack">
          <RoleGate permission="servers.write" doing="change or remove servers">
            {canEdit ? <ConnectionPanel serverId={id} connection={server.connection} /> : null}
            <AgentKeyPanel serverId={id} />
            <RemoveServer
              serverId={id}
              label={server.label}
              onRemoved={() => navigate('/dashboard', { replace: true })}
            />
          </RoleGate>
        </div>
      ) : null}
    </div>
  );
}
