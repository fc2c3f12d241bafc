import { type ReactNode, useEffect } from 'react';
import { Loading } from '../components/states';
import { meKey, useMe } from '../features/auth/api/get-me';
import { ApiError, setUnauthorizedHandler } from '../lib/api';
import { invalidate } from '../lib/query';
import { matchPath, navigate, useLocation } from '../lib/router';
import type { Me } from '../lib/wire';
import { Layout } from './layout';
import { RegisterPage, SignInPage, safeNext } from './pages/auth-pages';
import { AddServerPage, FleetPage } from './pages/fleet-pages';
import { NotFoundPage } from './pages/not-found-page';
import { SERVER_TABS, ServerPage, type ServerTab } from './pages/server-page';
import { SETTINGS_TABS, SettingsPage, type SettingsTab } from './pages/settings-pages';
import { AdminTicketsPage, NewTicketPage, TicketPage, TicketsPage } from './pages/ticket-pages';

const PUBLIC = ['/dashboard/sign-in', '/dashboard/register'];

function positiveId(raw: string | undefined): number | null {
  return raw && /^\d+$/.test(raw) && Number(raw) > 0 ? Number(raw) : null;
}

type Params = Record<string, string>;
type Route = [pattern: string, render: (p: Params, me: Me) => ReactNode | null];

const id = (p: Params) => positiveId(p.id);
const isServerTab = (tab: string | undefined) => SERVER_TABS.some((t) => t.id === tab);
const isSettingsTab = (tab: string | undefined) => SETTINGS_TABS.some((t) => t.id === tab);

/** The route table: the first pattern that matches and renders something wins. */
const ROUTES: Route[] = [
  ['/dashboard', () => <FleetPage />],
  ['/dashboard/servers/add', () => <AddServerPage />],
  ['/dashboard/servers/:id', (p, me) => (id(p) ? <ServerPage key={p.id} id={id(p)!} tab="overview" me={me} /> : null)],
  [
    '/dashboard/servers/:id/:tab',
    (p, me) =>
      id(p) && isServerTab(p.tab) ? <ServerPage key={p.id} id={id(p)!} tab={p.tab as ServerTab} me={me} /> : null,
  ],
  ['/dashboard/tickets', () => <TicketsPage />],
  ['/dashboard/tickets/new', () => <NewTicketPage />],
  ['/dashboard/tickets/:id', (p) => (id(p) ? <TicketPage key={p.id} id={id(p)!} admin={false} /> : null)],
  ['/dashboard/admin/tickets', (_p, me) => (me.role === 'admin' ? <AdminTicketsPage /> : null)],
  [
    '/dashboard/admin/tickets/:id',
    (p, me) => (me.role === 'admin' && id(p) ? <TicketPage key={`a${p.id}`} id={id(p)!} admin /> : null),
  ],
  ['/dashboard/settings', () => <SettingsPage tab="api" />],
  ['/dashboard/settings/:tab', (p) => (isSettingsTab(p.tab) ? <SettingsPage tab={p.tab as SettingsTab} /> : null)],
];

function Routes({ me, path }: { me: Me; path: string }) {
  for (const [pattern, render] of ROUTES) {
    const params = matchPath(pattern, path);
    const page = params ? render(params, me) : null;
    if (page) return page;
  }
  return <NotFoundPage />;
}

export function App() {
  const me = useMe();
  const { path, search } = useLocation();
  const signedOut = me.error instanceof ApiError && me.error.status === 401;
  const account = signedOut ? null : (me.data ?? null);
  const isPublic = PUBLIC.includes(path.replace(/\/+$/, ''));

  useEffect(() => {
    // Any 401 means the session ended: ask again who we are, which sends the user to sign in.
    setUnauthorizedHandler(() => invalidate(meKey));
    return () => setUnauthorizedHandler(null);
  }, []);

  useEffect(() => {
    if (signedOut && !isPublic) {
      const next = path.startsWith('/dashboard') && path !== '/dashboard' ? `?next=${encodeURIComponent(path)}` : '';
      navigate(`/dashboard/sign-in${next}`, { replace: true });
    }
    if (account && isPublic) navigate(safeNext(search), { replace: true });
  }, [signedOut, account, isPublic, path, search]);

  if (!account && !signedOut) {
    return (
      <Layout me={null}>
        {me.errorMessage ? (
          <div className="state state-error" role="alert">
            {me.errorMessage}{' '}
            <button type="button" className="button small" onClick={() => void me.refetch()}>
              Try again
            </button>
          </div>
        ) : (
          <Loading />
        )}
      </Layout>
    );
  }
  if (!account) {
    return <Layout me={null}>{path.startsWith('/dashboard/register') ? <RegisterPage /> : <SignInPage />}</Layout>;
  }
  if (isPublic)
    return (
      <Layout me={account}>
        <Loading />
      </Layout>
    );
  return (
    <Layout me={account}>
      <Routes me={account} path={path} />
    </Layout>
  );
}
