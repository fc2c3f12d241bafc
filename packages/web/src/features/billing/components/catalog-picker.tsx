import { Button } from '../../../components/buttons';
import { ErrorNote, QueryView } from '../../../components/states';
import { money } from '../../../lib/format';
import { useAddProduct } from '../api/add-product';
import { useCatalog } from '../api/get-catalog';

/** The catalog as cards, each with "Add" (no payment processor is involved). */
export function CatalogPicker({ onAdded }: { onAdded?: () => void }) {
  const query = useCatalog();
  const add = useAddProduct(() => onAdded?.());
  return (
    <QueryView query={query} what="Loading the catalog">
      {(items) => (
        <>
          <ul className="catalog">
            {items.map((item) => (
              <li key={item.id} className="card">
                <h3>{item.name}</h3>
                <p className="price">
                  {item.price_cents === 0 ? 'Free' : money(item.price_cents, item.currency)}
                  {item.price_cents === 0 ? '' : ` / ${item.interval}`}
                </p>
                <p className="muted">{item.description}</p>
                <p className="small">Up to {item.server_limit} servers</p>
                <ul className="small">
                  {item.features.map((f) => (
                    <li key={f}>{f}</li>
                  ))}
                </ul>
                <Button variant="primary" busy={add.pending} onClick={() => void add.run(item.id)}>
                  Add {item.name}
                </Button>
              </li>
            ))}
          </ul>
          <ErrorNote message={add.error} />
        </>
      )}
    </QueryView>
  );
}
