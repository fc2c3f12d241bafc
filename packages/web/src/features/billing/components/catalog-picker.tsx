import type { CatalogItem } from '@palisade/protocol';
import { useState } from 'react';
import { Button } from '../../../components/buttons';
import { ConfirmDialog } from '../../../components/confirm-dialog';
import { ErrorNote, QueryView } from '../../../components/states';
import { money } from '../../../lib/format';
import { useAddProduct } from '../api/add-product';
import { useCatalog } from '../api/get-catalog';
import { useProducts } from '../api/get-products';

const price = (item: CatalogItem) => `${money(item.price_cents, item.currency)} / ${item.interval}`;

/**
 * The catalog as cards, each with "Add". A paid plan asks first, and says that this edition takes no
 * payment; the free plan is one per account at a time (docs/decisions.md, "Plans that tell the truth").
 */
export function CatalogPicker({ onAdded }: { onAdded?: () => void }) {
  const query = useCatalog();
  const products = useProducts();
  const add = useAddProduct(() => onAdded?.());
  const [asking, setAsking] = useState<CatalogItem | null>(null);
  const freeHeld = products.data?.find((p) => p.price_cents === 0);
  return (
    <QueryView query={query} what="Loading the catalog">
      {(items) => (
        <>
          <ul className="catalog">
            {items.map((item) => {
              const free = item.price_cents === 0;
              const held = free && freeHeld !== undefined;
              return (
                <li key={item.id} className="card">
                  <h3>{item.name}</h3>
                  <p className="price">{free ? 'Free' : price(item)}</p>
                  <p className="muted">{item.description}</p>
                  <p className="small">Up to {item.server_limit} servers</p>
                  <ul className="small">
                    {item.features.map((f) => (
                      <li key={f}>{f}</li>
                    ))}
                  </ul>
                  {held ? (
                    <p className="small muted">
                      You have {freeHeld.name} already: one free plan per account at a time. Remove it above to take it
                      again.
                    </p>
                  ) : null}
                  <Button
                    variant="primary"
                    busy={add.pending}
                    disabled={held}
                    onClick={() => (free ? void add.run(item.id) : setAsking(item))}
                  >
                    Add {item.name}
                  </Button>
                </li>
              );
            })}
          </ul>
          <ErrorNote message={add.error} />
          {asking ? (
            <ConfirmPaid
              item={asking}
              onCancel={() => setAsking(null)}
              onConfirm={() => {
                setAsking(null);
                void add.run(asking.id);
              }}
            />
          ) : null}
        </>
      )}
    </QueryView>
  );
}

/** Before a paid plan is added: no payment is taken in this edition. */
function ConfirmPaid({
  item,
  onCancel,
  onConfirm,
}: {
  item: CatalogItem;
  onCancel: () => void;
  onConfirm: () => void;
}) {
  return (
    <ConfirmDialog
      title={`Add ${item.name} for ${price(item)}?`}
      confirmLabel={`Add ${item.name}`}
      onCancel={onCancel}
      onConfirm={onConfirm}
    >
      <p>
        No payment is taken in this edition of Palisade: nothing is charged and no card is asked for. The price is
        recorded in your billing summary, and you can remove the product while no server uses it.
      </p>
    </ConfirmDialog>
  );
}
