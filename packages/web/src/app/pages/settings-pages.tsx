import type { Me } from '@palisade/protocol';
import type { ReactNode } from 'react';
import { Link, useSearchParams } from 'react-router';
import { RoleGate } from '../../components/role-note';
import { useTwoFactor } from '../../features/account/api/two-factor';
import { PasswordPanel } from '../../features/account/components/password-panel';
import { SessionsPanel } from '../../features/account/components/sessions-panel';
import { TwoFactorPanel } from '../../features/account/components/two-factor-panel';
import { ChannelsPanel } from '../../features/alerts/components/channels-panel';
import { EvaluationStatus } from '../../features/alerts/components/evaluation-status';
import { HistoryPanel } from '../../features/alerts/components/history-panel';
import { MutesPanel } from '../../features/alerts/components/mutes-panel';
import { RulesPanel } from '../../features/alerts/components/rules-panel';
import { AuditLog } from '../../features/audit/components/audit-log';
import { useSingleSignOn } from '../../features/auth/api/get-single-sign-on';
import { DeleteAccountPanel } from '../../features/auth/components/delete-account-panel';
import { BillingPanel } from '../../features/billing/components/billing-panel';
import { CatalogPicker } from '../../features/billing/components/catalog-picker';
import { KeysPanel } from '../../features/keys/components/keys-panel';
import { SecurityEvents } from '../../features/security-events/components/security-events';
import { InviteForm, PendingInvitations } from '../../features/teams/components/invitations-panel';
import { MembersPanel } from '../../features/teams/components/members-panel';
import { TwoFactorRequirement } from '../../features/teams/components/two-factor-requirement';
import { TokensPanel } from '../../features/tokens/components/tokens-panel';
import { WebhookPanel } from '../../features/webhook/components/webhook-panel';
import { setRequestTeam } from '../../lib/api';
import { useCan, useCurrentTeam } from '../../lib/team';
import { useTitle } from '../use-title';

export const SETTINGS_TABS = [
  { id: 'account', title: 'Account' },
  { id: 'members', title: 'Members' },
  { id: 'api', title: 'API tokens' },
  { id: 'security', title: 'Security' },
  { id: 'notifications', title: 'Notifications' },
  { id: 'alerts', title: 'Alerts' },
  { id: 'audit', title: 'Audit log' },
  { id: 'billing', title: 'Products and billing' },
] as const;

export type SettingsTab = (typeof SETTINGS_TABS)[number]['id'];

function SettingsFrame({ tab, title, children }: { tab: SettingsTab; title: string; children: ReactNode }) {
  useTitle(title);
  return (
    <div className="stack">
      <h1>Settings</h1>
      <nav className="tabs" aria-label="Settings sections">
        {SETTINGS_TABS.map((t) => (
          <Link key={t.id} to={`/dashboard/settings/${t.id}`} aria-current={t.id === tab ? 'page' : undefined}>
            {t.title}
          </Link>
        ))}
      </nav>
      {children}
    </div>
  );
}

/**
 * Password, sessions, two-factor sign-in and deleting the account (docs/dashboard.md, "Settings,
 * account"). A person without a password signs in through the provider, which keeps their password
 * and second factor: no form here asks for a password they do not have.
 */
function AccountSettings({ me }: { me: Me }) {
  const twoFactor = useTwoFactor();
  const singleSignOn = useSingleSignOn();
  const provider = me.sign_in === 'single_sign_on' ? (singleSignOn.data?.name ?? 'single sign-on') : null;
  return (
    <SettingsFrame tab="account" title="Account">
      <section className="card" aria-labelledby="password-title">
        <h2 id="password-title">{provider === null ? 'Password' : 'Sign-in'}</h2>
        {provider === null ? (
          <PasswordPanel />
        ) : (
          <p>
            You sign in through <strong>{provider}</strong>. Your password and second factor are managed there, not
            here.
          </p>
        )}
      </section>
      <section className="card" aria-labelledby="sessions-title">
        <h2 id="sessions-title">Sessions</h2>
        <p className="muted">
          Browsers signed in to your account. Sign out one you do not recognise
          {provider === null ? ', then change the password.' : `, then change your password at ${provider}.`}
        </p>
        <SessionsPanel />
      </section>
      <section className="card" aria-labelledby="two-factor-title" id="two-factor">
        <h2 id="two-factor-title">Two-factor sign-in</h2>
        {provider === null ? (
          <TwoFactorPanel />
        ) : (
          <p>
            Your sign-in through {provider} covers it: its second factor stands for a Palisade code, also in a team that
            requires two-factor sign-in. Turn a second factor on at {provider}.
          </p>
        )}
      </section>
      <section className="card danger-zone" aria-labelledby="delete-title" id="delete-account">
        <h2 id="delete-title">Delete account</h2>
        <DeleteAccountPanel email={me.email} needsCode={twoFactor.data?.enabled === true} provider={provider} />
      </section>
    </SettingsFrame>
  );
}

/**
 * The team's members and invitations (docs/dashboard.md, "Settings, members"). Leaving the team
 * reloads the dashboard without a team in the address, which opens the person's first team.
 */
function MembersSettings({ me }: { me: Me }) {
  const team = useCurrentTeam();
  const canManage = useCan('members.manage');
  return (
    <SettingsFrame tab="members" title="Members">
      <section className="card" aria-labelledby="members-title">
        <h2 id="members-title">Members of {team?.name ?? 'this team'}</h2>
        <p className="muted">
          Your role here: <strong>{team?.role ?? '—'}</strong>.{' '}
          {canManage
            ? 'You can change roles up to your own, remove members and invite.'
            : `${team?.role ?? 'This role'}s cannot change members: ask an owner or admin.`}
        </p>
        <MembersPanel
          selfId={me.id}
          onLeft={() => {
            setRequestTeam(null);
            window.location.assign('/dashboard');
          }}
        />
      </section>
      <section className="card" aria-labelledby="require-two-factor-title">
        <h2 id="require-two-factor-title">Two-factor sign-in for the team</h2>
        <TwoFactorRequirement selfId={me.id} />
      </section>
      {canManage ? (
        <>
          <section className="card" aria-labelledby="invite-title">
            <h2 id="invite-title">Invite</h2>
            <InviteForm />
          </section>
          <section className="card" aria-labelledby="pending-title">
            <h2 id="pending-title">Pending invitations</h2>
            <PendingInvitations />
          </section>
        </>
      ) : null}
    </SettingsFrame>
  );
}

export function SettingsPage({ tab, me }: { tab: SettingsTab; me: Me }) {
  const [search] = useSearchParams();
  switch (tab) {
    case 'account':
      return <AccountSettings me={me} />;
    case 'members':
      return <MembersSettings me={me} />;
    case 'api':
      return (
        <SettingsFrame tab={tab} title="API tokens">
          <section className="card" aria-labelledby="tokens-title">
            <h2 id="tokens-title">API tokens</h2>
            <p className="muted">
              Personal access tokens (<code>svc_…</code>) for the read-only v1 API. Send one as{' '}
              <code>Authorization: Bearer svc_…</code>.
            </p>
            <TokensPanel />
          </section>
        </SettingsFrame>
      );
    case 'security':
      return (
        <SettingsFrame tab={tab} title="Security">
          <section className="card" aria-labelledby="keys-title">
            <h2 id="keys-title">API keys</h2>
            <p className="muted">
              Signing keys (<code>svck_…</code>) for SVC1-signed requests. The console keeps only a hash.
            </p>
            <KeysPanel />
          </section>
          <section className="card" aria-labelledby="events-title">
            <h2 id="events-title">Security events</h2>
            <SecurityEvents />
          </section>
        </SettingsFrame>
      );
    case 'audit':
      return (
        <SettingsFrame tab={tab} title="Audit log">
          <section className="card" aria-labelledby="audit-title">
            <h2 id="audit-title">Changes to your servers' protection</h2>
            <p className="muted">
              Every list entry, setting or pattern changed through the console, by whom, from where, and what the agent
              answered. Secrets are never shown. Entries cannot be edited; they are kept for a year by default.
            </p>
            <AuditLog />
          </section>
        </SettingsFrame>
      );
    case 'notifications':
      return (
        <SettingsFrame tab={tab} title="Notifications">
          <section className="card" aria-labelledby="webhook-title">
            <h2 id="webhook-title">Ticket notifications</h2>
            <WebhookPanel />
          </section>
        </SettingsFrame>
      );
    case 'alerts':
      return (
        <SettingsFrame tab={tab} title="Alerts">
          <section className="card" aria-labelledby="alert-history-title">
            <h2 id="alert-history-title">Alert history</h2>
            <p className="muted">
              What fired and ended lately, newest first; the rules and channels below decide what is sent.
            </p>
            <HistoryPanel />
          </section>
          <RoleGate permission="alerts.write" doing="change alerts">
            <section className="card" aria-labelledby="alert-channels-title">
              <h2 id="alert-channels-title">Alert channels</h2>
              <p className="muted">
                Where alerts go: the signed account webhook (Notifications tab), Slack or Discord incoming webhooks, or
                e-mail through the console's SMTP server.
              </p>
              <ChannelsPanel />
            </section>
            <section className="card" aria-labelledby="alert-rules-title">
              <h2 id="alert-rules-title">Alert rules</h2>
              <p className="muted">
                One notification when a condition starts and one when it ends; a repeat for long incidents if you set
                one.
              </p>
              <EvaluationStatus />
              <RulesPanel />
            </section>
            <section className="card" aria-labelledby="alert-mutes-title">
              <h2 id="alert-mutes-title">Maintenance</h2>
              <p className="muted">
                A muted server's alerts are not sent; one still firing when the mute ends is sent then.
              </p>
              <MutesPanel />
            </section>
          </RoleGate>
        </SettingsFrame>
      );
    case 'billing':
      return (
        <SettingsFrame tab={tab} title="Products and billing">
          {search.get('welcome') ? (
            <p className="note note-ok" role="status">
              Welcome to Palisade. Pick a product to start adding servers.
            </p>
          ) : null}
          <section className="card" aria-labelledby="billing-title">
            <h2 id="billing-title">Your products</h2>
            <BillingPanel />
          </section>
          <section aria-labelledby="catalog-title">
            <h2 id="catalog-title">Catalog</h2>
            <CatalogPicker />
          </section>
        </SettingsFrame>
      );
  }
}
