import { z } from 'zod';
import { FLEET_LISTS } from '../fleet.js';

/** `GET /api/fleet/entries`'s query: one list, paged (the page itself is read by the console). */
export const fleetEntriesQuery = z.object({
  list: z.enum(FLEET_LISTS, 'expected black or white').optional(),
  cursor: z.unknown().optional(),
  limit: z.unknown().optional(),
});

/** `GET|DELETE /api/fleet/addresses`'s query. */
export const fleetAddressQuery = z.object({
  ip: z.string('expected one IP address or CIDR, e.g. 203.0.113.7').min(1, 'expected one IP address or CIDR').max(100),
});
