import { Link, useNavigate } from 'react-router';
import { RoleNote } from '../../components/role-note';
import { Empty, QueryView } from '../../components/states';
import { useProducts } from '../../features/billing/api/get-products';
import { CatalogPicker } from '../../features/billing/components/catalog-picker';
import { AddServerForm } from '../../features/servers/components/add-server-form';
import { FleetTable } from '../../features/servers/components/fleet-table';
import { InstallCommand } from '../../features/servers/components/install-command';
import { useCan } from '../../lib/team';
import { useTitle } from '../use-title';

export function FleetPage() {
  useTitle('Fleet');
  const canAdd = useCan('servers.write');
  return (
    <div className="stack">
      <div className="page-head">
        <h1>Fleet</h1>
        <div className="actions">
          <Link className="button" to="/dashboard/agent-updates">
            Agent updates
          </Link>
          {canAdd ? (
            <Link className="button primary" to="/dashboard/servers/add">
              Add server
            </Link>
          ) : (
            <button type="button" className="button primary" disabled aria-describedby="add-server-note">
              Add server
            </button>
          )}
        </div>
      </div>
      <RoleNote permission="servers.write" doing="add or change servers" id="add-server-note" />
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
      <QueryView query={products} what="Loading your products">
        {(list) =>
          list.length === 0 ? (
            <Empty>
              <p>Servers belong to a product. Add one first (Starter is free).</p>
              <CatalogPicker />
            </Empty>
          ) : (
            <>
              <section className="stack" aria-labelledby="install-one-command">
                <h2 id="install-one-command">Install with one command</h2>
                <p>
                  Create a command and paste it on the server (Linux x86_64, as root). It installs the agent from this
                  console and adds the server here, online, without copying a key.
                </p>
                <InstallCommand products={list} />
              </section>
              <section className="stack" aria-labelledby="add-by-address">
                <h2 id="add-by-address">Or add a running agent by its address and key</h2>
                <ol className="steps">
                  <li>
                    Install and start the agent on the server, then run <code>palisade-agent key</code>. It prints the
                    agent address and key, and with <code>metrics.tls = on</code> the certificate fingerprint.
                  </li>
                  <li>Paste both below and test the connection.</li>
                </ol>
                <AddServerForm products={list} onAdded={(server) => navigate(`/dashboard/servers/${server.id}`)} />
              </section>
            </>
          )
        }
      </QueryView>
    </div>
  );
}
