import { type ReactNode, useState } from 'react';
import { Button } from '../../../components/buttons';
import { TextField } from '../../../components/field';
import { PageNav } from '../../../components/pager';
import { Empty, ErrorNote, QueryView } from '../../../components/states';
import { dateTime } from '../../../lib/format';
import { compareNames } from '../../../lib/names';
import { useDeleteMute } from '../api/delete-mute';
import { useAlertMutes } from '../api/get-mutes';
import { useRuleServers } from '../api/get-rule-servers';
import { useSetMute } from '../api/set-mute';

const HOUR = 3600_000;
/** Servers a page: the muted ones first, then the rest by name. */
const MUTES_PAGE = 25;

/** Maintenance: mute a server's alerts for a while, or unmute it. */
export function MutesPanel() {
  const servers = useRuleServers();
  const mutes = useAlertMutes();
  const mute = useSetMute();
  const unmute = useDeleteMute();
  const mutedUntil = new Map((mutes.data?.mutes ?? []).map((m) => [m.server_id, m.until]));
  const [query, setQuery] = useState('');
  const [page, setPage] = useState(1);
  const needle = query.trim().toLowerCase();
  return (
    <div className="stack">
      <ErrorNote message={mute.error ?? unmute.error} />
      <QueryView query={servers} what="Loading servers">
        {(data) =>
          data.servers.length === 0 ? (
            <Empty>
              <p>No servers yet.</p>
            </Empty>
          ) : (
            <MutesTable
              servers={data.servers
                .filter((s) => !needle || s.label.toLowerCase().includes(needle))
                .sort(
                  (a, b) =>
                    Number(mutedUntil.has(b.id)) - Number(mutedUntil.has(a.id)) || compareNames(a.label, b.label),
                )}
              total={data.servers.length}
              page={page}
              setPage={setPage}
              query={query}
              setQuery={(q) => {
                setQuery(q);
                setPage(1);
              }}
            >
              {(visible) => (
                <table className="table cards-on-mobile" aria-label="Maintenance">
                  <thead>
                    <tr>
                      <th scope="col">Server</th>
                      <th scope="col">Alerts</th>
                      <th scope="col">Actions</th>
                    </tr>
                  </thead>
                  <tbody>
                    {visible.map((s) => {
                      const until = mutedUntil.get(s.id);
                      return (
                        <tr key={s.id}>
                          <td data-label="Server">{s.label}</td>
                          <td data-label="Alerts">{until ? `Muted until ${dateTime(until)}` : 'On'}</td>
                          <td data-label="Actions">
                            {until ? (
                              <Button small busy={unmute.pending} onClick={() => void unmute.run(s.id)}>
                                Unmute
                              </Button>
                            ) : (
                              <>
                                <Button
                                  small
                                  busy={mute.pending}
                                  onClick={() => void mute.run({ serverId: s.id, until: Date.now() + HOUR })}
                                >
                                  Mute 1 h
                                </Button>{' '}
                                <Button
                                  small
                                  busy={mute.pending}
                                  onClick={() => void mute.run({ serverId: s.id, until: Date.now() + 24 * HOUR })}
                                >
                                  Mute 24 h
                                </Button>
                              </>
                            )}
                          </td>
                        </tr>
                      );
                    })}
                  </tbody>
                </table>
              )}
            </MutesTable>
          )
        }
      </QueryView>
    </div>
  );
}

type RuleServer = { id: number; label: string };

/** The maintenance list's search, its page of servers, and the pager. */
function MutesTable({
  servers,
  total,
  page,
  setPage,
  query,
  setQuery,
  children,
}: {
  servers: RuleServer[];
  total: number;
  page: number;
  setPage: (page: number) => void;
  query: string;
  setQuery: (query: string) => void;
  children: (visible: RuleServer[]) => ReactNode;
}) {
  const pages = Math.max(1, Math.ceil(servers.length / MUTES_PAGE));
  const current = Math.min(page, pages);
  return (
    <>
      {total > MUTES_PAGE ? (
        <TextField label="Find a server" type="search" value={query} onChange={(e) => setQuery(e.target.value)} />
      ) : null}
      {servers.length === 0 ? (
        <p className="muted">No server matches “{query.trim()}”.</p>
      ) : (
        children(servers.slice((current - 1) * MUTES_PAGE, current * MUTES_PAGE))
      )}
      {pages > 1 ? (
        <PageNav label="Pages of maintenance" current={current} pages={pages} onPage={setPage}>
          Page {current} of {pages} · {servers.length} servers
        </PageNav>
      ) : null}
    </>
  );
}
