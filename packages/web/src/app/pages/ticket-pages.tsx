import { Link, useNavigate } from 'react-router';
import { Empty, QueryView } from '../../components/states';
import { useProducts } from '../../features/billing/api/get-products';
import { NewTicketForm } from '../../features/tickets/components/new-ticket-form';
import { TicketList } from '../../features/tickets/components/ticket-list';
import { TicketThread } from '../../features/tickets/components/ticket-thread';
import { useTitle } from '../use-title';

export function TicketsPage() {
  useTitle('Tickets');
  return (
    <div className="stack">
      <div className="page-head">
        <h1>Tickets</h1>
        <Link className="button primary" to="/dashboard/tickets/new">
          Open a ticket
        </Link>
      </div>
      <TicketList scope="user" />
    </div>
  );
}

export function NewTicketPage() {
  useTitle('Open a ticket');
  const products = useProducts();
  const navigate = useNavigate();
  return (
    <div className="stack narrow">
      <p>
        <Link to="/dashboard/tickets">← Tickets</Link>
      </p>
      <h1>Open a ticket</h1>
      <QueryView query={products} what="Loading your products">
        {(list) =>
          list.length === 0 ? (
            <Empty>
              <p>
                Tickets are about a product. <Link to="/dashboard/settings/billing">Add a product</Link> first.
              </p>
            </Empty>
          ) : (
            <NewTicketForm products={list} onCreated={(t) => navigate(`/dashboard/tickets/${t.id}`)} />
          )
        }
      </QueryView>
    </div>
  );
}

export function TicketPage({ id, admin }: { id: number; admin: boolean }) {
  useTitle('Ticket');
  return (
    <div className="stack narrow">
      <p>
        <Link to={admin ? '/dashboard/admin/tickets' : '/dashboard/tickets'}>← Tickets</Link>
      </p>
      <TicketThread scope={admin ? 'admin' : 'user'} id={id} />
    </div>
  );
}

export function AdminTicketsPage() {
  useTitle('Answer tickets');
  return (
    <div className="stack">
      <h1>Answer tickets</h1>
      <p className="muted">Every account's tickets. Replies here are sent as Support.</p>
      <TicketList scope="admin" />
    </div>
  );
}
