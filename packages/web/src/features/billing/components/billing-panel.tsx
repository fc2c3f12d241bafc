import { ConfirmButton } from '../../../components/buttons';
import { Empty, ErrorNote, QueryView } from '../../../components/states';
import { money } from '../../../lib/format';
import { useBillingSummary } from '../api/get-billing-summary';
import { useRemoveProduct } from '../api/remove-product';

/** The account's products and what they cost per period; one no server uses can be removed. */
export function BillingPanel() {
  const query = useBillingSummary();
  const remove = useRemoveProduct();
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
                  <th scope="col">
                    <span className="visually-hidden">Actions</span>
                  </th>
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
                    <td data-label="Actions">
                      <ConfirmButton
                        small
                        label="Remove"
                        confirmLabel={`Remove ${p.name}`}
                        busy={remove.pending}
                        onConfirm={() => void remove.run(p.product_id)}
                        {...(p.servers_used > 0 ? { title: 'Remove or move its servers first' } : {})}
                      />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
            <ErrorNote message={remove.error} />
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
