import { type FormEvent, useState } from 'react';
import { Button } from '../../../components/buttons';
import { SelectField, TextArea, TextField } from '../../../components/field';
import { ErrorNote } from '../../../components/states';
import type { Errors } from '../../../lib/schema';
import { type CreateTicketValues, checkCreateTicket, useCreateTicket } from '../api/create-ticket';

export function NewTicketForm({
  products,
  onCreated,
}: {
  products: { id: number; name: string }[];
  onCreated: (ticket: { id: number }) => void;
}) {
  const [values, setValues] = useState<CreateTicketValues>({
    product_id: products[0] ? String(products[0].id) : '',
    subject: '',
    message: '',
  });
  const [errors, setErrors] = useState<Errors<keyof CreateTicketValues>>({});
  const mutation = useCreateTicket(onCreated);
  const set = (k: keyof CreateTicketValues) => (e: { target: { value: string } }) =>
    setValues({ ...values, [k]: e.target.value });

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const checked = checkCreateTicket(values);
    if (!checked.ok) return setErrors(checked.errors);
    setErrors({});
    void mutation.run(checked.value);
  };

  return (
    <form className="card form" onSubmit={submit} noValidate aria-label="Open a ticket">
      <SelectField label="Product" value={values.product_id} error={errors.product_id} onChange={set('product_id')}>
        {products.map((p) => (
          <option key={p.id} value={p.id}>
            {p.name}
          </option>
        ))}
      </SelectField>
      <TextField label="Subject" value={values.subject} error={errors.subject} onChange={set('subject')} />
      <TextArea label="Message" rows={6} value={values.message} error={errors.message} onChange={set('message')} />
      <ErrorNote message={mutation.error} />
      <Button type="submit" variant="primary" busy={mutation.pending}>
        Open ticket
      </Button>
    </form>
  );
}
