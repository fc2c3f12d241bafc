import type { Me, Team } from '@palisade/protocol';
import { type ReactNode, useEffect, useRef, useState } from 'react';
import { Link, useLocation, useNavigate } from 'react-router';
import { useSignOut } from '../features/auth/api/sign-out';
import { TeamSwitcher } from '../features/teams/components/team-switcher';
import { setRequestTeam } from '../lib/api';
import { teamAddress } from '../lib/team';
import { setTheme, THEMES, type Theme, useTheme } from '../lib/theme';

function NavLink({ to, children, match }: { to: string; children: ReactNode; match: (path: string) => boolean }) {
  const path = useLocation().pathname;
  return (
    <Link to={to} aria-current={match(path) ? 'page' : undefined}>
      {children}
    </Link>
  );
}

/** System / Light / Dark, remembered per browser (lib/theme.ts); in the header of every page, signed in or not. */
function ThemePicker() {
  const theme = useTheme();
  return (
    <label className="theme-picker">
      <span className="theme-picker-word">Theme</span>
      <select value={theme} onChange={(e) => setTheme(e.target.value as Theme)}>
        {THEMES.map((t) => (
          <option key={t.id} value={t.id}>
            {t.label}
          </option>
        ))}
      </select>
    </label>
  );
}

/** After each navigation, move focus to the page's heading so screen readers and keyboards start there. */
function useFocusOnNavigate(path: string) {
  const first = useRef(true);
  // biome-ignore lint/correctness/useExhaustiveDependencies: runs once per navigation, keyed on the path
  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    // The new page may still be loading (e.g. after sign-out the account is asked for again, which
    // a busy console can take seconds to answer): look for its heading for up to 10 s, unless the
    // user has meanwhile put focus somewhere in the page themselves. The page may also be drawn
    // again once that answer arrives, which drops the focused heading: for the rest of those 10 s,
    // focus that fell back to the document goes to the heading again.
    let tries = 0;
    let focused = false;
    let timer: ReturnType<typeof setTimeout>;
    const focusHeading = () => {
      const active = document.activeElement;
      const lost = !active || active === document.body;
      const inPage = !lost && document.querySelector('main')?.contains(active);
      if (!focused && inPage) return;
      const heading = document.querySelector<HTMLElement>('main h1');
      if (heading && (!focused || lost)) {
        heading.tabIndex = -1;
        heading.focus({ preventScroll: true });
        focused = true;
      }
      if (++tries < 200) timer = setTimeout(focusHeading, 50);
    };
    timer = setTimeout(focusHeading, 50);
    return () => clearTimeout(timer);
  }, [path]);
}

/** Where switching to another team goes: the same settings page, else that team's fleet. */
const switchedPath = (path: string) => (path.startsWith('/dashboard/settings/') ? path : '/dashboard');

export function Layout({
  me,
  teams,
  team,
  children,
}: {
  me: Me | null;
  /** The person's teams and the one in the address (signed in only). */
  teams?: readonly Team[] | undefined;
  team?: number | null;
  children: ReactNode;
}) {
  const path = useLocation().pathname;
  const navigate = useNavigate();
  const [menuOpen, setMenuOpen] = useState(false);
  const signOut = useSignOut(() => {
    setRequestTeam(null);
    navigate('/dashboard/sign-in', { replace: true });
  });
  useFocusOnNavigate(path);
  // A new page starts at the top, as a page load would.
  // biome-ignore lint/correctness/useExhaustiveDependencies: runs once per navigation, keyed on the path
  useEffect(() => {
    window.scrollTo(0, 0);
  }, [path]);
  // biome-ignore lint/correctness/useExhaustiveDependencies: the menu closes on every navigation
  useEffect(() => setMenuOpen(false), [path]);
  // …and on Escape, which gives the focus back to its button.
  useEffect(() => {
    if (!menuOpen) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== 'Escape') return;
      setMenuOpen(false);
      document.querySelector<HTMLButtonElement>('.menu-toggle')?.focus();
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, [menuOpen]);

  return (
    <>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <Link to="/dashboard" className="brand">
          <span aria-hidden="true" className="brand-mark">
            ▮▮▮
          </span>{' '}
          Palisade
        </Link>
        {me ? (
          <>
            <button
              type="button"
              className="menu-toggle"
              aria-expanded={menuOpen}
              aria-controls="main-nav"
              onClick={() => setMenuOpen(!menuOpen)}
            >
              Menu
            </button>
            <nav id="main-nav" aria-label="Main" className={menuOpen ? 'open' : ''}>
              <NavLink
                to="/dashboard"
                match={(p) =>
                  p === '/dashboard' || p.startsWith('/dashboard/servers') || p.startsWith('/dashboard/agent-updates')
                }
              >
                Fleet
              </NavLink>
              <NavLink to="/dashboard/protection" match={(p) => p.startsWith('/dashboard/protection')}>
                Protection
              </NavLink>
              <NavLink to="/dashboard/tickets" match={(p) => p.startsWith('/dashboard/tickets')}>
                Tickets
              </NavLink>
              {me.role === 'admin' ? (
                <NavLink to="/dashboard/admin/tickets" match={(p) => p.startsWith('/dashboard/admin')}>
                  Answer tickets
                </NavLink>
              ) : null}
              <NavLink to="/dashboard/settings/api" match={(p) => p.startsWith('/dashboard/settings')}>
                Settings
              </NavLink>
              {teams ? (
                <TeamSwitcher
                  teams={teams}
                  current={team ?? null}
                  onSwitch={(id) => navigate(teamAddress(switchedPath(path), id))}
                />
              ) : null}
              <span className="whoami" title={me.email}>
                {me.name}
              </span>
              <button
                type="button"
                className="button small"
                onClick={() => void signOut.run(undefined)}
                disabled={signOut.pending}
              >
                Sign out
              </button>
            </nav>
          </>
        ) : null}
        <ThemePicker />
      </header>
      {signOut.error ? (
        <p className="state state-error" role="alert">
          {signOut.error}
        </p>
      ) : null}
      <main id="main">{children}</main>
    </>
  );
}
