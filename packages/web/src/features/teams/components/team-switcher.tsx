import type { Team } from '@palisade/protocol';
import { type FormEvent, useId, useState } from 'react';
import { Button } from '../../../components/buttons';
import { TextField } from '../../../components/field';
import { fieldError, otherError } from '../../../lib/api';
import { checkTeamName, useCreateTeam } from '../api/teams';

/**
 * The header's team switcher (docs/dashboard.md, "Teams"): every team of the person with their
 * role there, and "New team". `onSwitch` gets the team to go to (app/layout.tsx puts it in the address).
 */
export function TeamSwitcher({
  teams,
  current,
  onSwitch,
}: {
  teams: readonly Team[];
  current: number | null;
  onSwitch: (id: number) => void;
}) {
  const selectId = useId();
  const [creating, setCreating] = useState(false);
  const [name, setName] = useState('');
  const [error, setError] = useState<string | undefined>();
  const create = useCreateTeam((out) => {
    setCreating(false);
    setName('');
    onSwitch(out.team.id);
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const checked = checkTeamName({ name: name.trim() });
    if (!checked.ok) return setError(checked.errors.name);
    setError(undefined);
    void create.run({ name: name.trim() });
  };
  const role = teams.find((t) => t.id === current)?.role;
  return (
    <div className="team-switcher">
      <label htmlFor={selectId} className="team-switcher-word">
        Team
      </label>
      <select id={selectId} value={current ?? ''} onChange={(e) => onSwitch(Number(e.target.value))}>
        {current === null || !role ? <option value="">Choose a team</option> : null}
        {teams.map((t) => (
          <option key={t.id} value={t.id}>
            {t.name} ({t.role})
          </option>
        ))}
      </select>
      {role ? (
        <span className="role-badge" title="Your role in this team">
          {role}
        </span>
      ) : null}
      {creating ? (
        <form className="team-create" onSubmit={submit} noValidate aria-label="Create a team">
          <TextField
            label="New team's name"
            value={name}
            error={error ?? fieldError(create.error, 'name')}
            onChange={(e) => setName(e.target.value)}
          />
          {otherError(create.error, ['name']) ? (
            <p className="field-error" role="alert">
              {otherError(create.error, ['name'])}
            </p>
          ) : null}
          <Button type="submit" small variant="primary" busy={create.pending}>
            Create team
          </Button>
          <Button small onClick={() => setCreating(false)}>
            Cancel
          </Button>
        </form>
      ) : (
        <Button small onClick={() => setCreating(true)}>
          New team
        </Button>
      )}
    </div>
  );
}
