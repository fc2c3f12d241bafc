import { BaselinePanel } from './baseline-panel';
import { EditNotice } from './control-state';
import { FeedsPanel } from './feeds-panel';
import { GeoPanel } from './geo-panel';
import { ListPanel } from './list-panel';
import { PatternsPanel } from './patterns-panel';

/** Everything the control proxy manages on one agent. */
export function ProtectionPanel({
  serverId,
  canRead,
  canEdit,
}: {
  serverId: number;
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
  return (
    <div className="stack">
      <EditNotice canEdit={canEdit} />
      <div className="grid-2">
        <ListPanel
          serverId={serverId}
          title="Whitelist"
          description="Addresses that are never blocked, whatever else matches."
          path="whitelist"
          clearPath="whitelist/clear"
          importPath="whitelist/import"
          canEdit={canEdit}
        />
        <ListPanel
          serverId={serverId}
          title="Blacklist"
          description="Addresses that are always blocked."
          path="blacklist"
          clearPath="blacklist/clear"
          canEdit={canEdit}
        />
      </div>
      <div className="grid-2">
        <GeoPanel serverId={serverId} canEdit={canEdit} />
        <PatternsPanel serverId={serverId} canEdit={canEdit} />
      </div>
      <div className="grid-2">
        <FeedsPanel serverId={serverId} canEdit={canEdit} />
        <div className="stack">
          <ListPanel
            serverId={serverId}
            title="Feeds never add"
            description="Feeds never block these addresses."
            path="autofetch/never-add"
            canEdit={canEdit}
          />
          <ListPanel
            serverId={serverId}
            title="Feeds never remove"
            description="Feeds never unblock these addresses."
            path="autofetch/never-remove"
            canEdit={canEdit}
          />
        </div>
      </div>
      <BaselinePanel serverId={serverId} canEdit={canEdit} />
    </div>
  );
}
