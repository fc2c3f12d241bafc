import type { PatternsAnswer } from '@palisade/protocol/control-schemas';
import { invalidate, useMutation } from '../../../lib/query';
import { changeControl } from './change-control';
import { controlKey } from './get-control';

/** A service found on the server whose shipped patterns are not all enabled, and those patterns. */
export interface ServiceOffer {
  service: string;
  found: string;
  patterns: string[];
}

/**
 * The services the agent found on its host (docs/protection.md, "Services found on the host") with
 * patterns still to enable; none from an agent that does not report services.
 */
export function servicesToOffer(answer: PatternsAnswer): ServiceOffer[] {
  const enabled = new Set(answer.patterns.map((p) => p.name));
  return (answer.services ?? []).flatMap((s) =>
    s.found !== null && !s.enabled
      ? [{ service: s.service, found: s.found, patterns: s.patterns.filter((p) => !enabled.has(p)) }]
      : [],
  );
}

/** "sshd and nginx found: enable their patterns". */
export function offerText(offers: ServiceOffer[]): string {
  const names = offers.map((o) => o.service);
  const list = names.length > 1 ? `${names.slice(0, -1).join(', ')} and ${names.at(-1)}` : (names[0] ?? '');
  return `${list} found: enable ${names.length > 1 ? 'their' : 'its'} patterns`;
}

/**
 * Enables every offered pattern, one `POST block-pattern {name}` each through the control proxy;
 * then the list reads again, also when one of them was refused partway (those enabled before it
 * show at once, and the error names the one refused).
 */
export const useEnableServices = (serverId: number) =>
  useMutation(async (offers: ServiceOffer[]) => {
    const names = [...new Set(offers.flatMap((o) => o.patterns))];
    try {
      for (const name of names)
        await changeControl(serverId, { method: 'POST', path: 'block-pattern', body: { name } });
    } finally {
      invalidate(controlKey(serverId, 'block-pattern'));
    }
    return names;
  });
