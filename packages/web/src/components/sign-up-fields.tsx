import type { RegisterRequest } from '@palisade/protocol';
import { PasswordField, TextField } from './field';

type SignUpErrors = Partial<Record<keyof RegisterRequest, string | undefined>>;

/** Name, e-mail and password of a new person: the register page and an invitation's sign-up. */
export function SignUpFields({
  values,
  errors,
  onChange,
}: {
  values: RegisterRequest;
  errors: SignUpErrors;
  onChange: (values: RegisterRequest) => void;
}) {
  return (
    <>
      <TextField
        label="Name"
        autoComplete="name"
        value={values.name}
        error={errors.name}
        onChange={(e) => onChange({ ...values, name: e.target.value })}
      />
      <TextField
        label="Email"
        type="email"
        autoComplete="email"
        value={values.email}
        error={errors.email}
        onChange={(e) => onChange({ ...values, email: e.target.value })}
      />
      <PasswordField
        label="Password"
        purpose="new"
        value={values.password}
        error={errors.password}
        onChange={(e) => onChange({ ...values, password: e.target.value })}
      />
    </>
  );
}
