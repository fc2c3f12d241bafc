import type { ReactNode } from 'react';
import { Link, useSearchParams } from 'react-router';
import { BillingPanel } from '../../features/billing/components/billing-panel';
import { CatalogPicker } from '../../features/billing/components/catalog-picker';
import { KeysPanel } from '../../features/keys/components/keys-panel';
import { SecurityEvents } from '../../features/security-events/components/security-events';
import { TokensPanel } from '../../features/tokens/components/tokens-panel';
import { WebhookPanel } from '../../features/webhook/components/webhook-panel';
import { useTitle } from '../use-title';

export const SETTINGS_TABS = [
  { id: 'api', title: 'API tokens' },
  { id: 'security', title: 'Security' },
  { id: 'notifications', title: 'Notifications' },
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

export function SettingsPage({ tab }: { tab: SettingsTab }) {
  const [search] = useSearchParams();
  switch (tab) {
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
    case 'notifications':
      return (
        <SettingsFrame tab={tab} title="Notifications">
          <section className="card" aria-labelledby="webhook-title">
            <h2 id="webhook-title">Ticket notifications</h2>
            <WebhookPanel />
          </section>
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
