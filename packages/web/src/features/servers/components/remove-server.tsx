import { ConfirmButton } from '../../../components/buttons';
import { ErrorNote } from '../../../components/states';
import { useDeleteServer } from '../api/delete-server';

export function RemoveServer({
  serverId,
  label,
  onRemoved,
}: {
  serverId: number;
  label: string;
  onRemoved: () => void;
}) {
  const mutation = useDeleteServer(onRemoved);
  return (
    <section className="card danger-zone" aria-labelledby="remove-title">
      <h2 id="remove-title">Remove server</h2>
      <p className="muted">
        Removes {label} from the console with its history and benchmarks. Its check-in token stops working. The agent
        keeps running on the server.
      </p>
      <ConfirmButton
        label="Remove server"
        confirmLabel={`Yes, remove ${label}`}
        busy={mutation.pending}
        onConfirm={() => void mutation.run(serverId)}
      />
      <ErrorNote message={mutation.error} />
    </section>
  );
}
