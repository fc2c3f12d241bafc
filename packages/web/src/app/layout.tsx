import { type ReactNode, useEffect, useRef, useState } from 'react';
import { Link, useLocation, useNavigate } from 'react-router';
import { useSignOut } from '../features/auth/api/sign-out';
import type { Me } from '../lib/wire';

function NavLink({ to, children, match }: { to: string; children: ReactNode; match: (path: string) => boolean }) {
  const path = useLocation().pathname;
  return (
    <Link to={to} aria-current={match(path) ? 'page' : undefined}>
      {children}
    </Link>
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
    // The new page may still be loading (e.g. after sign-out the account is asked for again):
    // look for its heading for up to 2 s.
    let tries = 0;
    let timer: ReturnType<typeof setTimeout>;
    const focusHeading = () => {
      const heading = document.querySelector<HTMLElement>('main h1');
      if (heading) {
        heading.tabIndex = -1;
        heading.focus({ preventScroll: true });
      } else if (++tries < 40) timer = setTimeout(focusHeading, 50);
    };
    timer = setTimeout(focusHeading, 50);
    return () => clearTimeout(timer);
  }, [path]);
}

export function Layout({ me, children }: { me: Me | null; children: ReactNode }) {
  const path = useLocation().pathname;
  const navigate = useNavigate();
  const [menuOpen, setMenuOpen] = useState(false);
  const signOut = useSignOut(() => navigate('/dashboard/sign-in', { replace: true }));
  useFocusOnNavigate(path);
  // A new page starts at the top, as a page load would.
  // biome-ignore lint/correctness/useExhaustiveDependencies: runs once per navigation, keyed on the path
  useEffect(() => {
    window.scrollTo(0, 0);
  }, [path]);
  // biome-ignore lint/correctness/useExhaustiveDependencies: the menu closes on every navigation
  useEffect(() => setMenuOpen(false), [path]);

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
              <NavLink to="/dashboard" match={(p) => p === '/dashboard' || p.startsWith('/dashboard/servers')}>
                Fleet
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
