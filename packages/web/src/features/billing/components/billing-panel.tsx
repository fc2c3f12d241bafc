import { Empty, QueryView } from '../../../components/states';
import { money } from '../../../lib/format';
import { useBillingSummary } from '../api/get-billing-summary';

/** The account's products and what they cost per period. */
export function BillingPanel() {
  const query = useBillingSummary();
  return (
    <QueryView query={query} what="Loading billing">
      {(summary) =>
        summary.items.length === 0 ? (
          <Empty>
            <p>No products yet. Add one below to start adding servers.</p>
          </Empty>
        ) : (
          <>
            <table className="table cards-on-mobile" aria-label="Your products">
              <thead>
                <tr>
                  <th scope="col">Product</th>
                  <th scope="col">Servers</th>
                  <th scope="col">Price</th>
                </tr>
              </thead>
              <tbody>
                {summary.items.map((p) => (
                  <tr key={p.product_id}>
                    <td data-label="Product">{p.name}</td>
                    <td data-label="Servers">
                      {p.servers_used} of {p.server_limit}
                    </td>
                    <td data-label="Price">
                      {money(p.price_cents, p.currency)} / {p.interval}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
            <p>
              <strong>Total:</strong>{' '}
              {summary.totals.map((t) => `${money(t.amount_cents, t.currency)} / ${t.interval}`).join(' + ') || '—'}
            </p>
          </>
        )
      }
    </QueryView>
  );
}
