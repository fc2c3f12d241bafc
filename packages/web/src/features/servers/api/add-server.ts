import type { DashboardData, DashboardServer } from '@palisade/protocol';
import { normalizeFingerprint, parseAgentUrl } from '@palisade/protocol/agent-address';
import { z } from 'zod';
import { request } from '../../../lib/api';
import { invalidate, useMutation } from '../../../lib/query';
import { parse, pattern, text } from '../../../lib/schema';
import { productsKey } from '../../billing/api/get-products';
import { serversKey } from './get-servers';

/** The console's own rules for a new server (routes/servers). */
export const agentUrl = text({ min: 1, max: 2048 }).refine(
  (value) => value === '' || parseAgentUrl(value) !== null,
  'Enter the agent address: http or https, a host and a port 1-65535, e.g. http://203.0.113.7:9100',
);
export const agentKey = pattern(
  /^agk_[0-9A-Za-z]{20,200}$/,
  'Enter the agent key (agk_…) printed by `palisade-agent key`.',
);

/** An agent with `metrics.tls = on` is pinned by the fingerprint it prints; empty means "trust the CA chain". */
export const tlsFingerprint = z
  .string()
  .trim()
  .refine(
    (value) => value === '' || normalizeFingerprint(value) !== null,
    'Enter the SHA-256 fingerprint the agent prints (AB:CD:… with 32 pairs, or 64 hex digits).',
  );

export const isHttpsAddress = (apiUrl: string) => /^https:\/\//i.test(apiUrl.trim());

export const addServerInput = z.object({
  product_id: pattern(/^\d+$/, 'Choose a product.'),
  name: text({ min: 1, max: 100 }),
  api_url: agentUrl,
  api_key: agentKey,
  tls_fingerprint: tlsFingerprint,
});

export type AddServerValues = z.input<typeof addServerInput>;

export const checkAddServer = (values: AddServerValues) => parse(addServerInput, values);

/** The pin goes with an https address only (the field is hidden, and ignored, for http). */
export const pinOf = (values: Pick<AddServerValues, 'api_url' | 'tls_fingerprint'>) =>
  isHttpsAddress(values.api_url) && values.tls_fingerprint.trim()
    ? { tls_fingerprint: values.tls_fingerprint.trim() }
    : {};

export const addServer = (values: AddServerValues) =>
  request<DashboardData<'server'>>('POST', '/api/servers', {
    body: {
      product_id: Number(values.product_id),
      name: values.name,
      api_url: values.api_url,
      api_key: values.api_key,
      ...pinOf(values),
    },
  });

export const useAddServer = (onDone: (server: DashboardServer) => void) =>
  useMutation(addServer, (out) => {
    invalidate(serversKey);
    invalidate(productsKey);
    onDone(out.server);
  });
