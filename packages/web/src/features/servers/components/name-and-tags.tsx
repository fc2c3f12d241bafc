import type { DashboardServer } from '@palisade/protocol';
import { type FormEvent, useState } from 'react';
import { Button } from '../../../components/buttons';
import { TextField } from '../../../components/field';
import { ErrorNote } from '../../../components/states';
import type { Errors } from '../../../lib/schema';
import { checkNameAndTags, useUpdateServer } from '../api/update-server';

/** Renaming a server and setting its tags (docs/fleet.md, "Tags"): nothing is sent to the agent. */
export function NameAndTags({ server }: { server: DashboardServer }) {
  const [open, setOpen] = useState(false);
  const [name, setName] = useState(server.label);
  const [tags, setTags] = useState(server.tags.join(', '));
  const [errors, setErrors] = useState<Errors<'name' | 'tags'>>({});
  const update = useUpdateServer(server.id, () => setOpen(false));

  if (!open) {
    return (
      <Button
        small
        onClick={() => {
          setName(server.label);
          setTags(server.tags.join(', '));
          setErrors({});
          update.reset();
          setOpen(true);
        }}
      >
        Edit name and tags
      </Button>
    );
  }

  const save = async (event: FormEvent) => {
    event.preventDefault();
    const checked = checkNameAndTags({ name, tags });
    if (!checked.ok) return setErrors(checked.errors);
    setErrors({});
    await update.run({ id: server.id, name: checked.value.name, tags: checked.value.tags });
  };

  return (
    <form className="card form" aria-label="Name and tags" onSubmit={(e) => void save(e)} noValidate>
      <TextField label="Name" value={name} onChange={(e) => setName(e.target.value)} error={errors.name} />
      <TextField
        label="Tags"
        value={tags}
        onChange={(e) => setTags(e.target.value)}
        error={errors.tags}
        hint="Up to 10, separated by commas: lowercase letters, digits, . _ - (for example web, eu-west)."
      />
      <ErrorNote message={update.error} />
      <div className="actions">
        <Button variant="primary" type="submit" busy={update.pending}>
          Save
        </Button>
        <Button onClick={() => setOpen(false)}>Cancel</Button>
      </div>
    </form>
  );
}
