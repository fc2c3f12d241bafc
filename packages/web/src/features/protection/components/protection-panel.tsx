import { NavLink } from 'react-router';
import { useControl } from '../api/get-control';
import { EditNotice } from './control-state';
import { DetectionPanel } from './detection-panel';
import { FeedsPanel } from './feeds-panel';
import { GeoPanel } from './geo-panel';
import { ListPanel } from './list-panel';
import { LookupBox } from './lookup-box';
import { PatternsPanel } from './patterns-panel';
import { SchedulePanel } from './schedule-panel';

/** The protection sub-pages, each at `/dashboard/servers/:id/protection/<id>` (docs/dashboard.md). */
export const PROTECTION_SECTIONS = [
  { id: 'lists', title: 'Lists' },
  { id: 'detection', title: 'Detection' },
  { id: 'geo', title: 'Geo' },
  { id: 'feeds', title: 'Feeds' },
  { id: 'patterns', title: 'Log patterns' },
  { id: 'schedule', title: 'Schedule' },
] as const;

export type ProtectionSection = (typeof PROTECTION_SECTIONS)[number]['id'];

export const isProtectionSection = (s: string | undefined): s is ProtectionSection =>
  PROTECTION_SECTIONS.some((x) => x.id === s);

/**
 * Shown on every protection sub-page while the agent runs monitor-only: it detects, lists and bans
 * in its lists, but its firewall blocks nothing (docs/protection.md, "Enforcement").
 */
export function MonitorBanner({ serverId }: { serverId: number }) {
  const config = useControl(serverId, 'config');
  const enforcement = config.data?.enforcement;
  if (enforcement?.backend !== 'monitor') return null;
  return (
    <div className="note note-warn banner" role="status" data-testid="monitor-banner">
      <strong>Monitor only: detects and lists, blocks nothing.</strong>{' '}
      {enforcement.reason ? `Why: ${enforcement.reason}. ` : ''}
      To block, run the agent as root or with CAP_NET_ADMIN and nftables installed, with protection.backend set to auto
      or nftables.
    </div>
  );
}

/** One protection sub-page: what the control proxy manages on one agent, a part at a time. */
export function ProtectionPanel({
  serverId,
  section,
  canRead,
  canEdit,
}: {
  serverId: number;
  section: ProtectionSection;
  canRead: boolean;
  canEdit: boolean;
}) {
  if (!canRead)
    return (
      <p className="note note-muted">
        Your account cannot view protection settings: it lacks the <code>control.read</code> permission. Ask a console
        admin to grant it.
      </p>
    );
  const base = `/dashboard/servers/${serverId}/protection`;
  return (
    <div className="stack">
      <MonitorBanner serverId={serverId} />
      <nav className="tabs subtabs" aria-label="Protection sections">
        {PROTECTION_SECTIONS.map((s) => (
          <NavLink key={s.id} to={`${base}/${s.id}`}>
            {s.title}
          </NavLink>
        ))}
      </nav>
      <EditNotice canEdit={canEdit} />
      {section === 'lists' ? (
        <>
          <LookupBox serverId={serverId} />
          <div className="grid-2">
            <ListPanel
              serverId={serverId}
              title="Whitelist"
              description="Addresses that are never blocked, whatever else matches."
              path="whitelist"
              clearPath="whitelist/clear"
              importPath="whitelist/import"
              canEdit={canEdit}
              other={{
                path: 'blacklist',
                warning: (ip) => `Also on the blacklist as ${ip}: the whitelist wins, so this stays allowed.`,
              }}
            />
            <ListPanel
              serverId={serverId}
              title="Blacklist"
              description="Addresses that are always blocked, unless the whitelist holds them."
              path="blacklist"
              clearPath="blacklist/clear"
              canEdit={canEdit}
              other={{
                path: 'whitelist',
                warning: (ip) => `Also on the whitelist as ${ip}: the whitelist wins, so that address is not blocked.`,
              }}
            />
          </div>
        </>
      ) : null}
      {section === 'detection' ? <DetectionPanel serverId={serverId} canEdit={canEdit} /> : null}
      {section === 'geo' ? <GeoPanel serverId={serverId} canEdit={canEdit} /> : null}
      {section === 'feeds' ? (
        <>
          <FeedsPanel serverId={serverId} canEdit={canEdit} />
          <div className="grid-2">
            <ListPanel
              serverId={serverId}
              title="Feeds never add"
              description="Feeds never block these addresses (an entry must cover a feed's whole range to take it out)."
              path="autofetch/never-add"
              canEdit={canEdit}
            />
            <ListPanel
              serverId={serverId}
              title="Feeds never remove"
              description="Blocked with the feeds while feeds are on, whatever the feeds say."
              path="autofetch/never-remove"
              canEdit={canEdit}
            />
          </div>
        </>
      ) : null}
      {section === 'patterns' ? <PatternsPanel serverId={serverId} canEdit={canEdit} /> : null}
      {section === 'schedule' ? <SchedulePanel serverId={serverId} canEdit={canEdit} /> : null}
    </div>
  );
}
