import { effectivePermissions, type Me, PERMISSIONS, type Team } from '@palisade/protocol';
import { useEffect, useLayoutEffect, useMemo, useState } from 'react';
import { Navigate, Route, Routes, useLocation, useNavigate, useParams } from 'react-router';
import { Loading } from '../components/states';
import { getMe, meKey, useMe } from '../features/auth/api/get-me';
import { isProtectionSection, ProtectionPanel } from '../features/protection/components/protection-panel';
import { teamsKey, useTeams } from '../features/teams/api/teams';
import { ApiError, requestTeam, setRequestTeam, setTwoFactorRequiredHandler, setUnauthorizedHandler } from '../lib/api';
import { clearFailedQueries, clearQueriesBut, invalidate, useQuery } from '../lib/query';
import { type CurrentTeam, TeamContext, teamAddress, teamOfSearch } from '../lib/team';
import { Layout } from './layout';
import { AgentUpdatesPage, RolloutPage } from './pages/agent-updates-page';
import { RegisterPage, SignInPage, safeNext } from './pages/auth-pages';
import { AddServerPage, FleetPage } from './pages/fleet-pages';
import { FleetProtectionPage } from './pages/fleet-protection-page';
import { AcceptInvitationPage, invitationToken } from './pages/invitation-page';
import { NotFoundPage } from './pages/not-found-page';
import { SERVER_TABS, ServerPage, type ServerTab } from './pages/server-page';
import { SETTINGS_TABS, SettingsPage, type SettingsTab } from './pages/settings-pages';
import { AdminTicketsPage, NewTicketPage, TicketPage, TicketsPage } from './pages/ticket-pages';
import { TWO_FACTOR_REQUIRED_PATH, TwoFactorRequiredPage } from './pages/two-factor-required-page';

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

/** `/dashboard/agent-updates/:id`: a positive id, else not found. */
function RolloutRoute() {
  const id = positiveId(useParams().id);
  return id ? <RolloutPage key={id} id={id} /> : <NotFoundPage />;
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
function DashboardRoutes({ me, onEnrolled }: { me: Me; onEnrolled: () => void }) {
  const admin = me.role === 'admin';
  return (
    <Routes>
      <Route
        caseSensitive
        path={TWO_FACTOR_REQUIRED_PATH}
        element={<TwoFactorRequiredPage onEnrolled={onEnrolled} />}
      />
      <Route caseSensitive path="/dashboard" element={<FleetPage />} />
      <Route caseSensitive path="/dashboard/servers/add" element={<AddServerPage />} />
      <Route caseSensitive path="/dashboard/servers/:id" element={<ServerRoute me={me} />} />
      <Route caseSensitive path="/dashboard/servers/:id/protection" element={<ServerRoute me={me} tab="protection" />}>
        <Route index element={<Navigate to="lists" replace />} />
        <Route caseSensitive path=":section" element={<ProtectionRoute me={me} />} />
      </Route>
      <Route caseSensitive path="/dashboard/servers/:id/:tab" element={<ServerRoute me={me} />} />
      <Route caseSensitive path="/dashboard/agent-updates" element={<AgentUpdatesPage />} />
      <Route caseSensitive path="/dashboard/agent-updates/:id" element={<RolloutRoute />} />
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

/** The team in the address with the person's role there and what it allows (packages/protocol/src/roles.ts). */
function currentTeam(teams: readonly Team[] | undefined, id: number | null, me: Me): CurrentTeam | null {
  const team = teams?.find((t) => t.id === id);
  if (!team) return null;
  // The role's permissions, with the control.* the member holds in the team (overrides included) from the account.
  const byRole = effectivePermissions(team.role);
  const granted = me.permissions.filter((p) => !byRole.includes(p));
  const revoked = PERMISSIONS.filter((p) => byRole.includes(p) && !me.permissions.includes(p));
  return { ...team, permissions: effectivePermissions(team.role, granted, revoked) };
}

/**
 * A team the person is not in (or no longer): the console's 404 (asked for here, once, with the
 * team the address names), and the teams they can go to.
 */
function NotInTeam({ team, teams }: { team: number; teams: readonly Team[] | undefined }) {
  const check = useQuery(['team-check', team], getMe);
  if (check.loading) return <Loading />;
  return (
    <div className="state state-error" role="alert">
      <p>{check.errorMessage ?? 'Not found.'}</p>
      <p>This team is not one of yours, or you are no longer a member. Ask its owner for an invitation.</p>
      {teams?.length ? (
        <ul>
          {teams.map((t) => (
            <li key={t.id}>
              <a href={teamAddress('/dashboard', t.id)}>
                {t.name} ({t.role})
              </a>
            </li>
          ))}
        </ul>
      ) : null}
    </div>
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
  const invitation = invitationToken(path);
  const teams = useTeams(account !== null || (me.error instanceof ApiError && me.error.status === 404));
  const addressTeam = teamOfSearch(location.search);

  // The team in the address is the one every call acts in (lib/api.ts). Set before any page below
  // asks the console (layout effects run before the queries start); on a switch, nothing read in the
  // last team stays.
  useLayoutEffect(() => {
    if (addressTeam === null || addressTeam === requestTeam()) return;
    const had = requestTeam();
    setRequestTeam(addressTeam);
    if (had !== null) clearQueriesBut(teamsKey);
  }, [addressTeam]);

  // An address without a team (an old link, a navigation inside the page) gets the team in use, else the person's first.
  const fallbackTeam = requestTeam() ?? teams.data?.[0]?.id ?? null;
  const needsTeam = account !== null && !isPublic && !invitation && addressTeam === null && fallbackTeam !== null;
  useEffect(() => {
    if (needsTeam && fallbackTeam !== null)
      navigate(teamAddress(`${path}${location.search}`, fallbackTeam), { replace: true });
  }, [needsTeam, fallbackTeam, path, location.search, navigate]);

  useEffect(() => {
    // Any 401 means the session ended: ask again who we are, which sends the user to sign in.
    setUnauthorizedHandler(() => invalidate(meKey));
    return () => setUnauthorizedHandler(null);
  }, []);

  // A team that requires two-factor sign-in refused a call (lib/api.ts): until the person turns it
  // on, every page of that team sends them to turn it on, then back (docs/dashboard.md, "Teams").
  const [enrolIn, setEnrolIn] = useState<number | null>(null);
  useEffect(() => {
    setTwoFactorRequiredHandler((team) => setEnrolIn(team ?? requestTeam()));
    return () => setTwoFactorRequiredHandler(null);
  }, []);
  // biome-ignore lint/correctness/useExhaustiveDependencies: another person signed in starts without the last one's refusal
  useEffect(() => setEnrolIn(null), [account?.id]);
  const mustEnrol =
    account !== null && enrolIn !== null && enrolIn === addressTeam && path !== TWO_FACTOR_REQUIRED_PATH;
  useEffect(() => {
    if (!mustEnrol || addressTeam === null) return;
    const next = encodeURIComponent(`${path}${location.search}`);
    navigate(teamAddress(`${TWO_FACTOR_REQUIRED_PATH}?next=${next}`, addressTeam), { replace: true });
  }, [mustEnrol, addressTeam, path, location.search, navigate]);

  useEffect(() => {
    // React Router renders a navigation as a transition, after the account change that caused it
    // (a sign-in form stores the account, then navigates): decide on the address the browser is at
    // now, so a form's own navigation is not overridden by one based on the page it left.
    if (window.location.pathname !== path) return;
    if (signedOut) setRequestTeam(null);
    if (signedOut && !isPublic && !invitation) {
      const address = `${path}${window.location.search}`;
      const next =
        path.startsWith('/dashboard') && address !== '/dashboard' ? `?next=${encodeURIComponent(address)}` : '';
      navigate(`/dashboard/sign-in${next}`, { replace: true });
    }
    if (account && isPublic) navigate(safeNext(search), { replace: true });
  }, [signedOut, account, isPublic, invitation, path, search, navigate]);

  // An invitation link is for the signed-in and the signed-out alike (its page offers a sign-up).
  if (invitation && (account || signedOut))
    return (
      <Layout me={account}>
        <AcceptInvitationPage token={invitation} me={account} />
      </Layout>
    );

  if (!account && !signedOut && me.error instanceof ApiError && me.error.status === 404 && addressTeam !== null)
    return (
      <Layout me={null}>
        <NotInTeam team={addressTeam} teams={teams.data} />
      </Layout>
    );
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
  if (isPublic || (addressTeam === null && (teams.loading || needsTeam)))
    return (
      <Layout me={account}>
        <Loading />
      </Layout>
    );
  if (addressTeam !== null && teams.data && !teams.data.some((t) => t.id === addressTeam))
    return (
      <Layout me={account} teams={teams.data} team={addressTeam}>
        <NotInTeam team={addressTeam} teams={teams.data} />
      </Layout>
    );
  return (
    <TeamContext.Provider value={currentTeam(teams.data, addressTeam, account)}>
      <Layout me={account} teams={teams.data} team={addressTeam}>
        {mustEnrol ? (
          <Loading />
        ) : (
          <DashboardRoutes
            key={addressTeam ?? 0}
            me={account}
            onEnrolled={() => {
              setEnrolIn(null);
              // What the team refused before is asked again on the pages the person goes back to.
              clearFailedQueries();
            }}
          />
        )}
      </Layout>
    </TeamContext.Provider>
  );
}
