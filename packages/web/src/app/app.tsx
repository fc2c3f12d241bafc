import type { Me } from '@palisade/protocol';
import { useEffect, useMemo } from 'react';
import { Navigate, Route, Routes, useLocation, useNavigate, useParams } from 'react-router';
import { Loading } from '../components/states';
import { meKey, useMe } from '../features/auth/api/get-me';
import { isProtectionSection, ProtectionPanel } from '../features/protection/components/protection-panel';
import { ApiError, setUnauthorizedHandler } from '../lib/api';
import { invalidate } from '../lib/query';
import { Layout } from './layout';
import { RegisterPage, SignInPage, safeNext } from './pages/auth-pages';
import { AddServerPage, FleetPage } from './pages/fleet-pages';
import { FleetProtectionPage } from './pages/fleet-protection-page';
import { NotFoundPage } from './pages/not-found-page';
import { SERVER_TABS, ServerPage, type ServerTab } from './pages/server-page';
import { SETTINGS_TABS, SettingsPage, type SettingsTab } from './pages/settings-pages';
import { AdminTicketsPage, NewTicketPage, TicketPage, TicketsPage } from './pages/ticket-pages';

const PUBLIC = ['/dashboard/sign-in', '/dashboard/register'];

function positiveId(raw: string | undefined): number | null {
  return raw && /^\d+$/.test(raw) && Number(raw) > 0 ? Number(raw) : null;
}

const isServerTab = (tab: string | undefined): tab is ServerTab => SERVER_TABS.some((t) => t.id === tab);
const isSettingsTab = (tab: string | undefined): tab is SettingsTab => SETTINGS_TABS.some((t) => t.id === tab);

/**
 * `/dashboard/servers/:id` and `/dashboard/servers/:id/:tab`: a positive id and a known tab, else not
 * found. The protection tab is its own route (`tab` given), whose sub-pages are nested routes.
 */
function ServerRoute({ me, tab: fixed }: { me: Me; tab?: ServerTab }) {
  const params = useParams();
  const { id: raw } = params;
  const tab = fixed ?? params.tab ?? 'overview';
  const id = positiveId(raw);
  return id && isServerTab(tab) ? <ServerPage key={id} id={id} tab={tab} me={me} /> : <NotFoundPage />;
}

/** `/dashboard/servers/:id/protection/:section`: one protection sub-page (docs/dashboard.md). */
function ProtectionRoute({ me }: { me: Me }) {
  const { id: raw, section } = useParams();
  const id = positiveId(raw);
  if (!id || !isProtectionSection(section)) return <NotFoundPage />;
  return (
    <ProtectionPanel
      serverId={id}
      section={section}
      canRead={me.permissions.includes('control.read')}
      canEdit={me.permissions.includes('control.edit')}
    />
  );
}

function TicketRoute({ admin }: { admin: boolean }) {
  const id = positiveId(useParams().id);
  return id ? <TicketPage key={`${admin ? 'a' : ''}${id}`} id={id} admin={admin} /> : <NotFoundPage />;
}

function SettingsRoute({ me }: { me: Me }) {
  const { tab = 'api' } = useParams();
  return isSettingsTab(tab) ? <SettingsPage tab={tab} me={me} /> : <NotFoundPage />;
}

/** The route table (React Router; docs/decisions.md, "Dashboard router"): exact, case-sensitive paths. */
function DashboardRoutes({ me }: { me: Me }) {
  const admin = me.role === 'admin';
  return (
    <Routes>
      <Route caseSensitive path="/dashboard" element={<FleetPage />} />
      <Route caseSensitive path="/dashboard/servers/add" element={<AddServerPage />} />
      <Route caseSensitive path="/dashboard/servers/:id" element={<ServerRoute me={me} />} />
      <Route caseSensitive path="/dashboard/servers/:id/protection" element={<ServerRoute me={me} tab="protection" />}>
        <Route index element={<Navigate to="lists" replace />} />
        <Route caseSensitive path=":section" element={<ProtectionRoute me={me} />} />
      </Route>
      <Route caseSensitive path="/dashboard/servers/:id/:tab" element={<ServerRoute me={me} />} />
      <Route caseSensitive path="/dashboard/protection" element={<FleetProtectionPage />} />
      <Route caseSensitive path="/dashboard/tickets" element={<TicketsPage />} />
      <Route caseSensitive path="/dashboard/tickets/new" element={<NewTicketPage />} />
      <Route caseSensitive path="/dashboard/tickets/:id" element={<TicketRoute admin={false} />} />
      <Route caseSensitive path="/dashboard/admin/tickets" element={admin ? <AdminTicketsPage /> : <NotFoundPage />} />
      <Route
        caseSensitive
        path="/dashboard/admin/tickets/:id"
        element={admin ? <TicketRoute admin /> : <NotFoundPage />}
      />
      <Route caseSensitive path="/dashboard/settings" element={<SettingsRoute me={me} />} />
      <Route caseSensitive path="/dashboard/settings/:tab" element={<SettingsRoute me={me} />} />
      <Route path="*" element={<NotFoundPage />} />
    </Routes>
  );
}

export function App() {
  const me = useMe();
  const location = useLocation();
  const navigate = useNavigate();
  const path = location.pathname;
  const search = useMemo(() => new URLSearchParams(location.search), [location.search]);
  const signedOut = me.error instanceof ApiError && me.error.status === 401;
  const account = signedOut ? null : (me.data ?? null);
  const isPublic = PUBLIC.includes(path.replace(/\/+$/, ''));

  useEffect(() => {
    // Any 401 means the session ended: ask again who we are, which sends the user to sign in.
    setUnauthorizedHandler(() => invalidate(meKey));
    return () => setUnauthorizedHandler(null);
  }, []);

  useEffect(() => {
    // React Router renders a navigation as a transition, after the account change that caused it
    // (a sign-in form stores the account, then navigates): decide on the address the browser is at
    // now, so a form's own navigation is not overridden by one based on the page it left.
    if (window.location.pathname !== path) return;
    if (signedOut && !isPublic) {
      const next = path.startsWith('/dashboard') && path !== '/dashboard' ? `?next=${encodeURIComponent(path)}` : '';
      navigate(`/dashboard/sign-in${next}`, { replace: true });
    }
    if (account && isPublic) navigate(safeNext(search), { replace: true });
  }, [signedOut, account, isPublic, path, search, navigate]);

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
      <DashboardRoutes me={account} />
    </Layout>
  );
}
