import { Button } from '../../../components/buttons';
import { Empty, ErrorNote, QueryView } from '../../../components/states';
import { dateTime } from '../../../lib/format';
import { useDeleteMute } from '../api/delete-mute';
import { useAlertMutes } from '../api/get-mutes';
import { useRuleServers } from '../api/get-rule-servers';
import { useSetMute } from '../api/set-mute';

const HOUR = 3600_000;

/** Maintenance: mute a server's alerts for a while, or unmute it. */
export function MutesPanel() {
  const servers = useRuleServers();
  const mutes = useAlertMutes();
  const mute = useSetMute();
  const unmute = useDeleteMute();
  const mutedUntil = new Map((mutes.data?.mutes ?? []).map((m) => [m.server_id, m.until]));
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
            <table className="table cards-on-mobile" aria-label="Maintenance">
              <thead>
                <tr>
                  <th scope="col">Server</th>
                  <th scope="col">Alerts</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {data.servers.map((s) => {
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
          )
        }
      </QueryView>
    </div>
  );
}
