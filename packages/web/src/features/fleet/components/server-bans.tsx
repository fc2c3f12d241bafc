import { QueryView } from '../../../components/states';
import { useServerBans } from '../api/fleet';

const REASONS: Record<string, string> = {
  invalid: 'not an address',
  too_wide: 'wider than /24 or /64',
  special_use: 'special-use range',
  private: 'private address (no policy allows it)',
  console_address: "the console's own address",
  control_characters: 'control characters',
  rate: 'over the rate',
};

/**
 * The bans this server reported to the fleet (docs/protection.md, "What a fleet may hold"): how
 * many of this minute's it used, and the ones the console refused, by reason.
 */
export function ServerBansPanel({ serverId }: { serverId: number }) {
  const query = useServerBans(serverId);
  return (
    <section className="card" aria-labelledby="server-bans-title">
      <h2 id="server-bans-title">Reported bans</h2>
      <QueryView query={query} what="Loading reported bans">
        {(b) => (
          <>
            <p className="muted">
              {b.accepted_in_window} of {b.limit_per_minute} this minute; {b.refused_total} refused in all.
            </p>
            {b.refused_total > 0 ? (
              <dl className="facts">
                {Object.entries(b.refused).map(([reason, n]) => (
                  <div key={reason}>
                    <dt>{REASONS[reason] ?? reason}</dt>
                    <dd>{n}</dd>
                  </div>
                ))}
                {b.last_refused ? (
                  <div>
                    <dt>last refused</dt>
                    <dd>{b.last_refused}</dd>
                  </div>
                ) : null}
              </dl>
            ) : null}
          </>
        )}
      </QueryView>
    </section>
  );
}
