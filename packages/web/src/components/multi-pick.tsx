import { useId, useState } from 'react';

/** Options shown at once below the search; a fleet of 200 is found by typing, not by scrolling. */
export const PICK_SHOWN = 12;

/**
 * A searchable multi-select (servers, tags): the chosen options first, each a checked box that
 * unticks it, then a search box and the first PICK_SHOWN other options that match, in the order
 * given. With few options it is a plain set of checkboxes.
 */
export function MultiPick<T extends string | number>({
  legend,
  noun,
  options,
  selected,
  onToggle,
}: {
  legend: string;
  /** Plural, for "Find servers" and "12 more servers match". */
  noun: string;
  options: { value: T; label: string }[];
  selected: T[];
  onToggle: (value: T) => void;
}) {
  const [query, setQuery] = useState('');
  const searchId = useId();
  const chosen = options.filter((o) => selected.includes(o.value));
  const needle = query.trim().toLowerCase();
  const others = options.filter((o) => !selected.includes(o.value) && o.label.toLowerCase().includes(needle));
  const searchable = options.length > PICK_SHOWN;
  const shown = searchable ? others.slice(0, PICK_SHOWN) : others;
  const box = (o: { value: T; label: string }, checked: boolean) => (
    <label key={String(o.value)}>
      <input type="checkbox" checked={checked} onChange={() => onToggle(o.value)} /> {o.label}
    </label>
  );
  return (
    <fieldset className="chips multi-pick">
      <legend>{legend}</legend>
      {chosen.map((o) => box(o, true))}
      {searchable ? (
        <div className="field inline multi-pick-search">
          <label htmlFor={searchId}>Find {noun}</label>
          <input
            id={searchId}
            type="search"
            value={query}
            placeholder={`${options.length} ${noun}`}
            onChange={(e) => setQuery(e.target.value)}
          />
        </div>
      ) : null}
      {shown.map((o) => box(o, false))}
      {others.length > shown.length ? (
        <p className="muted small" role="status">
          {others.length - shown.length} more {noun} match: type more of the name to narrow them.
        </p>
      ) : searchable && others.length === 0 && needle ? (
        <p className="muted small" role="status">
          No other {noun} match “{query.trim()}”.
        </p>
      ) : null}
    </fieldset>
  );
}
