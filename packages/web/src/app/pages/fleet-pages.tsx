import { Link, useNavigate } from 'react-router';
import { Empty, QueryView } from '../../components/states';
import { useProducts } from '../../features/billing/api/get-products';
import { CatalogPicker } from '../../features/billing/components/catalog-picker';
import { AddServerForm } from '../../features/servers/components/add-server-form';
import { FleetTable } from '../../features/servers/components/fleet-table';
import { useTitle } from '../use-title';

export function FleetPage() {
  useTitle('Fleet');
  return (
    <div className="stack">
      <div className="page-head">
        <h1>Fleet</h1>
        <Link className="button primary" to="/dashboard/servers/add">
          Add server
        </Link>
      </div>
      <FleetTable />
    </div>
  );
}

export function AddServerPage() {
  useTitle('Add a server');
  const products = useProducts();
  const navigate = useNavigate();
  return (
    <div className="stack narrow">
      <p>
        <Link to="/dashboard">← Fleet</Link>
      </p>
      <h1>Add a server</h1>
      <ol className="steps">
        <li>
          Install and start the agent on the server, then run <code>palisade-agent key</code>. It prints the agent
          address and key, and with <code>metrics.tls = on</code> the certificate fingerprint.
        </li>
        <li>Paste both below and test the connection.</li>
      </ol>
      <QueryView query={products} what="Loading your products">
        {(list) =>
          list.length === 0 ? (
            <Empty>
              <p>Servers belong to a product. Add one first (Starter is free).</p>
              <CatalogPicker />
            </Empty>
          ) : (
            <AddServerForm products={list} onAdded={(server) => navigate(`/dashboard/servers/${server.id}`)} />
          )
        }
      </QueryView>
    </div>
  );
}
