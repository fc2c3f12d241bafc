import { AddressPanel } from '../../features/fleet/components/address-panel';
import { ListsPanel } from '../../features/fleet/components/lists-panel';
import { PoliciesPanel } from '../../features/fleet/components/policies-panel';
import { useTitle } from '../use-title';

/** Protection → Fleet (docs/protection.md, "Fleet policies"): policies, the fleet lists and the address lookup. */
export function FleetProtectionPage() {
  useTitle('Fleet protection');
  return (
    <div className="stack">
      <h1>Fleet protection</h1>
      <AddressPanel />
      <ListsPanel />
      <PoliciesPanel />
    </div>
  );
}
