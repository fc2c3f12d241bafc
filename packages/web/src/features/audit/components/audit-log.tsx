import { AUDIT_ACTION_LABELS, type AuditEntry } from '@palisade/protocol';
import { useState } from 'react';
import { Link } from 'react-router';
import { Button } from '../../../components/buttons';
import { Empty, ErrorNote, QueryView } from '../../../components/states';
import { errorText } from '../../../lib/api';
import { dateTime } from '../../../lib/format';
import { getAuditPage, useAuditLog } from '../api/get-audit';

const METHOD_WORDS: Record<string, string> = { POST: 'set', DELETE: 'removed' };

function Row({ e }: { e: AuditEntry }) {
  return (
    <tr>
      <td data-label="When" className="nowrap">
        {dateTime(e.at)}
      </td>
      <td data-label="Who">
        {e.actor}
        <div className="muted small">{e.ip ?? '—'}</div>
      </td>
      <td data-label="Server">
        {e.server_id !== null ? <Link to={`/dashboard/servers/${e.server_id}`}>{e.server_name}</Link> : '—'}
      </td>
      <td data-label="Change">
        <span title={AUDIT_ACTION_LABELS[e.action]}>
          <code>{e.path}</code> {METHOD_WORDS[e.method ?? ''] ?? e.method}
        </span>
        <div className="muted small audit-summary">{e.summary}</div>
      </td>
      <td data-label="Result">
        <span className={`pill ${e.status < 400 ? 'pill-ok' : 'pill-bad'}`}>{e.status}</span> {e.outcome}
      </td>
    </tr>
  );
}

/** The account's audit log (docs/protection.md, "Audit log"): newest first, older pages on request. */
export function AuditLog() {
  const query = useAuditLog();
  const [older, setOlder] = useState<{ entries: AuditEntry[]; next: string | null } | null>(null);
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState<string | null>(null);

  return (
    <QueryView query={query} what="Loading the audit log">
      {(first) => {
        const entries = [...first.entries, ...(older?.entries ?? [])];
        const next = older ? older.next : first.next_cursor;
        const loadOlder = async () => {
          if (!next) return;
          setLoading(true);
          setError(null);
          try {
            const page = await getAuditPage(next);
            setOlder({ entries: [...(older?.entries ?? []), ...page.entries], next: page.next_cursor });
          } catch (err) {
            setError(errorText(err));
          } finally {
            setLoading(false);
          }
        };
        return entries.length === 0 ? (
          <Empty>
            <p>No changes yet. Every change made to a server's protection through the console is listed here.</p>
          </Empty>
        ) : (
          <>
            <p className="muted" role="status">
              {entries.length} of {first.total} entries
            </p>
            <div className="table-scroll">
              <table className="table cards-on-mobile" aria-label="Audit log">
                <thead>
                  <tr>
                    <th scope="col">When</th>
                    <th scope="col">Who</th>
                    <th scope="col">Server</th>
                    <th scope="col">Change</th>
                    <th scope="col">Result</th>
                  </tr>
                </thead>
                <tbody>
                  {entries.map((e) => (
                    <Row key={e.id} e={e} />
                  ))}
                </tbody>
              </table>
            </div>
            <ErrorNote message={error} />
            {next ? (
              <Button onClick={() => void loadOlder()} busy={loading}>
                Load older entries
              </Button>
            ) : null}
          </>
        );
      }}
    </QueryView>
  );
}
