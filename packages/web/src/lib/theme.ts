import { useSyncExternalStore } from 'react';

/**
 * The colour theme (docs/dashboard.md, "Themes"): "system" follows the browser's
 * prefers-color-scheme through CSS alone; "light" and "dark" are a choice remembered per browser in
 * localStorage and written to `<html data-theme>`, which styles.css reads.
 */
export const THEMES = [
  { id: 'system', label: 'System' },
  { id: 'light', label: 'Light' },
  { id: 'dark', label: 'Dark' },
] as const;
export type Theme = (typeof THEMES)[number]['id'];

const STORAGE_KEY = 'palisade.theme';
const CHANGED = 'palisade-theme-change';

const isTheme = (value: unknown): value is Theme => THEMES.some((t) => t.id === value);

/** The remembered choice; "system" when none was made or storage is unavailable (private windows may throw). */
export function storedTheme(): Theme {
  try {
    const value = window.localStorage.getItem(STORAGE_KEY);
    return isTheme(value) ? value : 'system';
  } catch {
    return 'system';
  }
}

/** Writes the choice to the root element; main.tsx calls it before the first render so no frame shows the other theme. */
export function applyTheme(theme: Theme = storedTheme()): void {
  if (theme === 'system') delete document.documentElement.dataset.theme;
  else document.documentElement.dataset.theme = theme;
}

export function setTheme(theme: Theme): void {
  try {
    if (theme === 'system') window.localStorage.removeItem(STORAGE_KEY);
    else window.localStorage.setItem(STORAGE_KEY, theme);
  } catch {
    // Storage refused: the choice still holds for this page.
  }
  applyTheme(theme);
  window.dispatchEvent(new Event(CHANGED));
}

const darkQuery = () => window.matchMedia('(prefers-color-scheme: dark)');

/** The theme the page shows now: the choice, or the system's when the choice is "system". */
export function shownTheme(): 'light' | 'dark' {
  const theme = storedTheme();
  if (theme !== 'system') return theme;
  return darkQuery().matches ? 'dark' : 'light';
}

function subscribe(onChange: () => void): () => void {
  // Another tab's choice arrives as a storage event; apply it here too.
  const onStorage = (event: StorageEvent) => {
    if (event.key !== STORAGE_KEY && event.key !== null) return;
    applyTheme();
    onChange();
  };
  const query = darkQuery();
  window.addEventListener(CHANGED, onChange);
  window.addEventListener('storage', onStorage);
  query.addEventListener('change', onChange);
  return () => {
    window.removeEventListener(CHANGED, onChange);
    window.removeEventListener('storage', onStorage);
    query.removeEventListener('change', onChange);
  };
}

/** The choice (for the toggle). */
export function useTheme(): Theme {
  return useSyncExternalStore(subscribe, storedTheme, () => 'system' as const);
}

/** The theme shown, which changes with the choice and with the system's; canvas drawings redraw on it. */
export function useShownTheme(): 'light' | 'dark' {
  return useSyncExternalStore(subscribe, shownTheme, () => 'light' as const);
}
