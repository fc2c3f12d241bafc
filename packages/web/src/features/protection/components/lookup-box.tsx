import type { Holder, LookupAnswer } from '@palisade/protocol/control-schemas';
import { type FormEvent, useState } from 'react';
import { Button } from '../../../components/buttons';
import { TextField } from '../../../components/field';
import { ErrorNote } from '../../../components/states';
import { errorText } from '../../../lib/api';
import { dateTime } from '../../../lib/format';
import { controlProblem, lookUpAddress } from '../api/get-control';

const KIND_NAMES: Record<Holder['kind'], string> = {
  loopback: 'Loopback',
  whitelist: 'Whitelist',
  ssh_session: 'SSH session',
  console: 'Console',
  blacklist: 'Blacklist',
  'never-add': 'Feeds never add',
  'never-remove': 'Feeds never remove',
  feed: 'Feed',
  geo: 'Geo rule',
};

const EFFECTS: Record<Holder['effect'], string> = { accept: 'Allows', drop: 'Blocks', none: 'No effect' };

/** Who put it there: the entry's source and note, the feed's name or the country. */
function origin(h: Holder): string {
  if (h.entry)
    return [
      h.entry.source,
      h.entry.note ? `"${h.entry.note}"` : '',
      h.entry.expires_at ? `until ${dateTime(h.entry.expires_at)}` : '',
    ]
      .filter(Boolean)
      .join(', ');
  if (h.feed) return h.feed;
  if (h.country) return h.country;
  return '—';
}

/**
 * "Why is this address blocked?": asks the agent (`GET blacklist?ip=`, docs/protection.md) which
 * list entry, attack ban, feed or geo rule holds an address, and what its firewall does with it.
 */
export function LookupBox({ serverId }: { serverId: number }) {
  const [ip, setIp] = useState('');
  const [answer, setAnswer] = useState<LookupAnswer | null>(null);
  const [fieldError, setFieldError] = useState<string | undefined>();
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const ask = async (event: FormEvent) => {
    event.preventDefault();
    const text = ip.trim();
    if (!text) return setFieldError('Type one address, e.g. 203.0.113.7.');
    setFieldError(undefined);
    setError(null);
    setBusy(true);
    try {
      setAnswer(await lookUpAddress(serverId, text));
    } catch (err) {
      setAnswer(null);
      const problem = controlProblem(err);
      // The agent names the field: "ip: … is not an IP address" belongs under the box.
      if (problem.kind === 'other' && /^ip: /.test(errorText(err))) setFieldError(errorText(err).slice(4));
      else setError(problem.kind === 'other' ? errorText(err) : problem.text);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section className="card" aria-labelledby="lookup-title">
      <h3 id="lookup-title">Why is this address blocked?</h3>
      <p className="muted">
        Asks the agent which list, attack ban, feed or geo rule holds an address, and what its firewall does with it.
      </p>
      <form className="inline-form" onSubmit={(e) => void ask(e)} noValidate aria-label="Look up an address">
        <TextField
          label="IP address"
          value={ip}
          error={fieldError}
          placeholder="203.0.113.7"
          onChange={(e) => setIp(e.target.value)}
        />
        <Button type="submit" variant="primary" busy={busy}>
          Look up
        </Button>
      </form>
      <ErrorNote message={error} />
      {answer ? (
        <div className="stack" data-testid="lookup-answer">
          <p
            className={`note ${answer.verdict === 'drop' ? 'note-bad' : 'note-ok'}`}
            role="status"
            aria-label={`Lookup of ${answer.ip}`}
          >
            <code className="address">{answer.ip}</code>: {answer.summary}
          </p>
          {answer.on_both_lists ? (
            <p className="note note-warn">
              On both the whitelist and the blacklist: the whitelist wins, so the blacklist entry does not block this
              address. Remove one of the two entries to make the intent clear.
            </p>
          ) : null}
          {answer.holders.length > 0 ? (
            <div className="table-scroll">
              <table className="table" aria-label={`What holds ${answer.ip}`}>
                <thead>
                  <tr>
                    <th scope="col">Held by</th>
                    <th scope="col">Entry or range</th>
                    <th scope="col">From</th>
                    <th scope="col">Effect</th>
                    <th scope="col">Why</th>
                  </tr>
                </thead>
                <tbody>
                  {answer.holders.map((h) => (
                    <tr key={`${h.kind}-${h.range}-${h.feed ?? h.entry?.ip ?? ''}`}>
                      <td className="nowrap">{KIND_NAMES[h.kind]}</td>
                      <td>{h.range ? <code className="address">{h.range}</code> : '—'}</td>
                      <td>{origin(h)}</td>
                      <td className="nowrap">{EFFECTS[h.effect]}</td>
                      <td className="detail">{h.detail}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          ) : null}
        </div>
      ) : null}
    </section>
  );
}
