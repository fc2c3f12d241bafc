import { FEED_PAGE_DEFAULT } from '@palisade/protocol/control';
import { useState } from 'react';
import { Button } from '../../../components/buttons';
import { Empty } from '../../../components/states';
import { useQuery } from '../../../lib/query';
import { getFeedPage } from '../api/get-control';
import { ControlState } from './control-state';

/** A feed's entries, a page at a time (`GET blacklist?source=feed:<name>`), with the total. */
export function FeedEntries({ serverId, feed }: { serverId: number; feed: string }) {
  // The cursors of the pages seen so far: the last is the page shown, null the first page.
  const [cursors, setCursors] = useState<(string | null)[]>([null]);
  const cursor = cursors.at(-1) ?? null;
  const page = useQuery(['server', serverId, 'control', 'blacklist', 'feed', feed, cursor], () =>
    getFeedPage(serverId, feed, cursor),
  );
  return (
    <section className="feed-entries" aria-label={`Entries of ${feed}`}>
      <h4>Entries of {feed}</h4>
      <ControlState query={page} what={`Loading the entries of ${feed}`}>
        {(p) => {
          if (p.total === 0)
            return (
              <Empty>
                <p>This feed has no entries yet: turn feeds on and fetch it.</p>
              </Empty>
            );
          const first = (cursors.length - 1) * FEED_PAGE_DEFAULT + 1;
          return (
            <>
              <p className="muted small" role="status">
                Entries {first.toLocaleString('en')}–{(first + p.entries.length - 1).toLocaleString('en')} of{' '}
                {p.total.toLocaleString('en')}, in address order.
              </p>
              <ul className="address-grid">
                {p.entries.map((e) => (
                  <li key={e}>
                    <code className="address">{e}</code>
                  </li>
                ))}
              </ul>
              <div className="actions">
                <Button small disabled={cursors.length === 1} onClick={() => setCursors(cursors.slice(0, -1))}>
                  Previous page
                </Button>
                <Button small disabled={!p.next_cursor} onClick={() => setCursors([...cursors, p.next_cursor])}>
                  Next page
                </Button>
              </div>
            </>
          );
        }}
      </ControlState>
    </section>
  );
}
